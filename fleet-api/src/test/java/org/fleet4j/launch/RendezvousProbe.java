package org.fleet4j.launch;

import java.nio.file.Path;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.fleet.Fleet;

/**
 * A rank program that really joins its job: Fleet.init rendezvouses at the master, the rank records that it joined
 * under PROBE_DIR, waits for PROBE_DIR/release, and sums one per rank over the job's process group.
 */
public final class RendezvousProbe {
    private RendezvousProbe() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(System.getenv("PROBE_DIR"));
        try (Fleet fleet = Fleet.init()) {
            int rank = fleet.workerIndex();
            RoleProbe.writeAtomically(dir.resolve("rank-" + rank + ".joined"), Long.toString(ProcessHandle.current().pid()));
            RoleProbe.awaitFile(dir.resolve("release"));
            double ranks = fleet.util().allReduce(1.0, ReduceOp.SUM);
            System.out.println("rank " + rank + " counted " + (int) ranks + " ranks in its job");
        }
    }
}
