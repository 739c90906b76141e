package org.fleet4j.fleet.role;

import com.google.auto.service.AutoService;
import java.util.Map;

/**
 * The role from Open MPI's {@code mpirun}: OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE ({@link MpiRanks}).
 * Asked before Slurm: ranks that mpirun starts inside an allocation inherit the allocation's SLURM_* variables.
 */
@AutoService(ClusterEnvironment.class)
public final class OpenMpiEnvironment implements ClusterEnvironment {
    public static final String NAME = "Open MPI";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int order() {
        return 45;
    }

    @Override
    public boolean isPresent(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        return vars.has("OMPI_COMM_WORLD_SIZE") || vars.has("OMPI_COMM_WORLD_RANK");
    }

    @Override
    public Placement placement(Map<String, String> env) {
        return MpiRanks.placement(new EnvVars(env, NAME), "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE");
    }
}
