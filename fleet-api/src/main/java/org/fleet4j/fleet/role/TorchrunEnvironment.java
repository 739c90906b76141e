package org.fleet4j.fleet.role;

import com.google.auto.service.AutoService;
import java.util.Map;
import org.fleet4j.cluster.Role;

/**
 * The role from torchrun: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK (the node), MASTER_ADDR and
 * MASTER_PORT, where rank 0 hosts the rendezvous store. Told apart from a PyTorchJob pod's variables (which torchrun's
 * workers inherit) by LOCAL_WORLD_SIZE, LOCAL_RANK or TORCHELASTIC_RUN_ID, which only torchrun sets.
 */
@AutoService(ClusterEnvironment.class)
public final class TorchrunEnvironment implements ClusterEnvironment {
    public static final String NAME = "torchrun";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int order() {
        return 20;
    }

    @Override
    public boolean isPresent(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        return vars.has("LOCAL_WORLD_SIZE") || vars.has("LOCAL_RANK") || vars.has("TORCHELASTIC_RUN_ID");
    }

    @Override
    public Placement placement(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        int world = vars.positive("WORLD_SIZE");
        int rank = vars.index("RANK", world, "WORLD_SIZE");
        int localWorld = vars.positive("LOCAL_WORLD_SIZE");
        int localRank = vars.index("LOCAL_RANK", localWorld, "LOCAL_WORLD_SIZE");
        int nodes = vars.evenShare(world, "WORLD_SIZE", localWorld, "LOCAL_WORLD_SIZE");
        int nodeRank = vars.has("GROUP_RANK") ? vars.index("GROUP_RANK", nodes, "WORLD_SIZE / LOCAL_WORLD_SIZE") : rank / localWorld;
        if (nodeRank * localWorld + localRank != rank) {
            throw vars.error("RANK=" + rank + " is not GROUP_RANK=" + nodeRank + " x LOCAL_WORLD_SIZE=" + localWorld
                    + " + LOCAL_RANK=" + localRank);
        }
        Role role = Role.trainer(rank, world, localRank, localWorld, nodeRank, nodes, vars.master(world),
                vars.string("FLEET_HOST", "127.0.0.1"), vars.string("TORCHELASTIC_RUN_ID", vars.jobId()), NAME);
        return new Placement.Process(NAME, role, vars.read());
    }
}
