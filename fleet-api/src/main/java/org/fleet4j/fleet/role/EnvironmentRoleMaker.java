package org.fleet4j.fleet.role;

import java.util.Map;
import org.fleet4j.cluster.Role;

/**
 * Finds which launcher started this process from the variables it set, checked in this order: fleetrun
 * (FLEET_WORLD_SIZE), Paddle's launcher (PADDLE_TRAINERS_NUM), torchrun (WORLD_SIZE), Open MPI
 * (OMPI_COMM_WORLD_SIZE), Slurm (SLURM_PROCID), and Paddle's again for a lone TRAINING_ROLE (so that a server
 * missing its other variables is told which). With none of them the process is a world of one.
 */
public final class EnvironmentRoleMaker implements RoleMaker {
    private final Map<String, String> env;

    public EnvironmentRoleMaker(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    /** The role from this process's own environment. */
    public static EnvironmentRoleMaker fromSystem() {
        return new EnvironmentRoleMaker(System.getenv());
    }

    /** The role maker of the launcher whose variables are present. */
    public RoleMaker detect() {
        if (present(FleetRunRoleMaker.MARKER)) {
            return new FleetRunRoleMaker(env);
        }
        if (present(PaddleRoleMaker.MARKER)) {
            return new PaddleRoleMaker(env);
        }
        if (present(TorchrunRoleMaker.MARKER)) {
            return new TorchrunRoleMaker(env);
        }
        if (present(MpiRoleMaker.MARKER)) {
            return new MpiRoleMaker(env);
        }
        if (present(SlurmRoleMaker.MARKER)) {
            return new SlurmRoleMaker(env);
        }
        if (present(ParameterServerVariables.TRAINING_ROLE)) {
            return new PaddleRoleMaker(env);
        }
        return Role::single;
    }

    @Override
    public Role role() {
        return detect().role();
    }

    private boolean present(String name) {
        String v = env.get(name);
        return v != null && !v.isBlank();
    }
}
