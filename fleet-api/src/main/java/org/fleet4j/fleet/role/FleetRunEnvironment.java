package org.fleet4j.fleet.role;

import com.google.auto.service.AutoService;
import java.util.Map;
import org.fleet4j.cluster.Role;

/**
 * The role from {@code bin/fleetrun}: FLEET_RANK, FLEET_WORLD_SIZE, FLEET_LOCAL_*, FLEET_NODE_RANK, FLEET_NNODES,
 * FLEET_MASTER for a trainer, with Paddle's TRAINING_ROLE and parameter-server variables
 * ({@link ParameterServerVariables}) as fleetrun sets them.
 */
@AutoService(ClusterEnvironment.class)
public final class FleetRunEnvironment implements ClusterEnvironment {
    public static final String NAME = "fleetrun";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int order() {
        return 0;
    }

    @Override
    public boolean isPresent(Map<String, String> env) {
        return new EnvVars(env, NAME).has("FLEET_WORLD_SIZE");
    }

    @Override
    public Placement placement(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        Role role = ParameterServerVariables.role(vars, () -> trainer(vars));
        return new Placement.Process(NAME, role, vars.read());
    }

    private static Role trainer(EnvVars vars) {
        int world = vars.positive("FLEET_WORLD_SIZE");
        int rank = vars.index("FLEET_RANK", world, "FLEET_WORLD_SIZE");
        int localWorld = vars.positive("FLEET_LOCAL_WORLD_SIZE");
        int localRank = vars.index("FLEET_LOCAL_RANK", localWorld, "FLEET_LOCAL_WORLD_SIZE");
        int nodes = vars.positive("FLEET_NNODES");
        int nodeRank = vars.index("FLEET_NODE_RANK", nodes, "FLEET_NNODES");
        if (nodes * localWorld != world) {
            throw vars.error("FLEET_NNODES=" + nodes + " x FLEET_LOCAL_WORLD_SIZE=" + localWorld + " is not FLEET_WORLD_SIZE="
                    + world);
        }
        if (nodeRank * localWorld + localRank != rank) {
            throw vars.error("FLEET_RANK=" + rank + " is not FLEET_NODE_RANK=" + nodeRank + " x FLEET_LOCAL_WORLD_SIZE="
                    + localWorld + " + FLEET_LOCAL_RANK=" + localRank);
        }
        if (world > 1 && !vars.has("FLEET_MASTER")) {
            throw vars.error("environment variable FLEET_MASTER is not set (expected host:port of the rendezvous store for "
                    + world + " ranks)");
        }
        return Role.trainer(rank, world, localRank, localWorld, nodeRank, nodes, vars.string("FLEET_MASTER", null),
                vars.string("FLEET_HOST", "127.0.0.1"), vars.jobId(), NAME);
    }
}
