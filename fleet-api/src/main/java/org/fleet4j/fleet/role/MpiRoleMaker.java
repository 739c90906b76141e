package org.fleet4j.fleet.role;

import java.util.Map;
import org.fleet4j.cluster.Role;

/**
 * The role from Open MPI's {@code mpirun}: OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE. MPI names no
 * rendezvous address, so FLEET_MASTER (or MASTER_ADDR and MASTER_PORT) must be exported to every rank
 * ({@code mpirun -x FLEET_MASTER=host:port}). Ranks are assumed placed by node (--map-by node is not supported).
 */
public final class MpiRoleMaker implements RoleMaker {
    static final String MARKER = "OMPI_COMM_WORLD_SIZE";
    private final EnvVars vars;

    public MpiRoleMaker(Map<String, String> env) {
        this.vars = new EnvVars(env, "Open MPI");
    }

    @Override
    public Role role() {
        int world = vars.positive("OMPI_COMM_WORLD_SIZE");
        int rank = vars.index("OMPI_COMM_WORLD_RANK", world, "OMPI_COMM_WORLD_SIZE");
        int localWorld = vars.has("OMPI_COMM_WORLD_LOCAL_SIZE") ? vars.positive("OMPI_COMM_WORLD_LOCAL_SIZE") : world;
        int localRank = vars.index("OMPI_COMM_WORLD_LOCAL_RANK", localWorld, "OMPI_COMM_WORLD_LOCAL_SIZE");
        int nodes = vars.evenShare(world, "OMPI_COMM_WORLD_SIZE", localWorld, "OMPI_COMM_WORLD_LOCAL_SIZE");
        int nodeRank = rank / localWorld;
        if (rank % localWorld != localRank) {
            throw new IllegalArgumentException("Open MPI: OMPI_COMM_WORLD_RANK=" + rank + " with OMPI_COMM_WORLD_LOCAL_RANK="
                    + localRank + " and OMPI_COMM_WORLD_LOCAL_SIZE=" + localWorld + " is not a by-slot placement; "
                    + "start mpirun with --map-by slot");
        }
        return Role.trainer(rank, world, localRank, localWorld, nodeRank, nodes, vars.master(world),
                vars.string("FLEET_HOST", "127.0.0.1"), vars.jobId(), "Open MPI");
    }
}
