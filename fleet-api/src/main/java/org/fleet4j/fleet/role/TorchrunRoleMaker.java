package org.fleet4j.fleet.role;

import java.util.Map;
import org.fleet4j.cluster.Role;

/**
 * The role from torchrun: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK (the node), MASTER_ADDR and
 * MASTER_PORT, where rank 0 hosts the rendezvous store.
 */
public final class TorchrunRoleMaker implements RoleMaker {
    static final String MARKER = "WORLD_SIZE";
    private final EnvVars vars;

    public TorchrunRoleMaker(Map<String, String> env) {
        this.vars = new EnvVars(env, "torchrun");
    }

    @Override
    public Role role() {
        int world = vars.positive("WORLD_SIZE");
        int rank = vars.index("RANK", world, "WORLD_SIZE");
        int localWorld = vars.positive("LOCAL_WORLD_SIZE");
        int localRank = vars.index("LOCAL_RANK", localWorld, "LOCAL_WORLD_SIZE");
        int nodes = vars.evenShare(world, "WORLD_SIZE", localWorld, "LOCAL_WORLD_SIZE");
        int nodeRank = vars.has("GROUP_RANK") ? vars.index("GROUP_RANK", nodes, "WORLD_SIZE / LOCAL_WORLD_SIZE") : rank / localWorld;
        if (nodeRank * localWorld + localRank != rank) {
            throw new IllegalArgumentException("torchrun: RANK=" + rank + " is not GROUP_RANK=" + nodeRank
                    + " x LOCAL_WORLD_SIZE=" + localWorld + " + LOCAL_RANK=" + localRank);
        }
        return Role.trainer(rank, world, localRank, localWorld, nodeRank, nodes, vars.master(world),
                vars.string("FLEET_HOST", "127.0.0.1"), vars.string("TORCHELASTIC_RUN_ID", vars.jobId()), "torchrun");
    }
}
