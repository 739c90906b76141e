package org.fleet4j.fleet.role;

import com.google.auto.service.AutoService;
import java.util.Map;

/**
 * The role from MPICH's and Intel MPI's Hydra launcher ({@code mpiexec}, {@code mpirun}): PMI_RANK and PMI_SIZE, with
 * MPI_LOCALRANKID and MPI_LOCALNRANKS for the node ({@link MpiRanks}). Slurm's {@code srun --mpi=pmi2} sets PMI_RANK
 * and PMI_SIZE too but no MPI_LOCALRANKID: with SLURM_PROCID beside them, Slurm's own variables describe the task.
 */
@AutoService(ClusterEnvironment.class)
public final class PmiEnvironment implements ClusterEnvironment {
    public static final String NAME = "MPICH/Intel MPI (PMI)";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int order() {
        return 46;
    }

    @Override
    public boolean isPresent(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        return (vars.has("PMI_RANK") || vars.has("PMI_SIZE")) && (vars.has("MPI_LOCALRANKID") || !vars.has("SLURM_PROCID"));
    }

    @Override
    public Placement placement(Map<String, String> env) {
        return MpiRanks.placement(new EnvVars(env, NAME), "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS");
    }
}
