package org.fleet4j.fleet.role;

import java.util.Map;
import org.fleet4j.cluster.Role;

/**
 * The role from Slurm's {@code srun}: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, SLURM_NNODES. The
 * rendezvous address comes from FLEET_MASTER (or MASTER_ADDR and MASTER_PORT), which the batch script exports.
 */
public final class SlurmRoleMaker implements RoleMaker {
    static final String MARKER = "SLURM_PROCID";
    private final EnvVars vars;

    public SlurmRoleMaker(Map<String, String> env) {
        this.vars = new EnvVars(env, "Slurm");
    }

    @Override
    public Role role() {
        int world = vars.positive("SLURM_NTASKS");
        int rank = vars.index("SLURM_PROCID", world, "SLURM_NTASKS");
        int nodes = vars.has("SLURM_NNODES") ? vars.positive("SLURM_NNODES") : 1;
        int localWorld = vars.evenShare(world, "SLURM_NTASKS", nodes, "SLURM_NNODES");
        int localRank = vars.index("SLURM_LOCALID", localWorld, "SLURM_NTASKS / SLURM_NNODES");
        int nodeRank = vars.has("SLURM_NODEID") ? vars.index("SLURM_NODEID", nodes, "SLURM_NNODES") : 0;
        if (nodeRank * localWorld + localRank != rank) {
            throw new IllegalArgumentException("Slurm: SLURM_PROCID=" + rank + " is not SLURM_NODEID=" + nodeRank
                    + " x " + localWorld + " tasks per node + SLURM_LOCALID=" + localRank
                    + "; use the block distribution (srun --distribution=block)");
        }
        return Role.trainer(rank, world, localRank, localWorld, nodeRank, nodes, vars.master(world),
                vars.string("FLEET_HOST", "127.0.0.1"), vars.string("SLURM_JOB_ID", vars.jobId()), "Slurm");
    }
}
