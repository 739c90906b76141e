package org.fleet4j.fleet.role;

import org.fleet4j.cluster.Role;

/**
 * An MPI launcher's rank variables, whatever their names: the world, the rank, and the rank among the processes on
 * its node. MPI names no rendezvous address, so FLEET_MASTER (or MASTER_ADDR and MASTER_PORT) must be exported to
 * every rank ({@code mpirun -x FLEET_MASTER=host:port}, {@code mpiexec -genv}). Nodes follow from a by-slot placement
 * (consecutive ranks fill a node), which is mpirun's default.
 */
final class MpiRanks {
    private MpiRanks() {
    }

    static Placement placement(EnvVars vars, String rankVar, String sizeVar, String localRankVar, String localSizeVar) {
        int world = vars.positive(sizeVar);
        int rank = vars.index(rankVar, world, sizeVar);
        int localWorld = vars.has(localSizeVar) ? vars.positive(localSizeVar) : world;
        int localRank = vars.index(localRankVar, localWorld, localSizeVar);
        int nodes = vars.evenShare(world, sizeVar, localWorld, localSizeVar);
        if (rank % localWorld != localRank) {
            throw vars.error(rankVar + "=" + rank + " with " + localRankVar + "=" + localRank + " and " + localSizeVar + "="
                    + localWorld + " is not a by-slot placement; start mpirun with --map-by slot");
        }
        Role role = Role.trainer(rank, world, localRank, localWorld, rank / localWorld, nodes, vars.master(world),
                vars.string("FLEET_HOST", "127.0.0.1"), vars.jobId(), vars.launcher());
        return new Placement.Process(vars.launcher(), role, vars.read());
    }
}
