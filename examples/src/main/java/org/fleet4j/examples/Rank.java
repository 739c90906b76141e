package org.fleet4j.examples;

import java.nio.file.Path;
import org.fleet4j.fleet.Fleet;

/** This process's place in the job, as Fleet.init found it, and where rank 0 writes its results. */
public record Rank(int rank, int worldSize, Path logDir) {

    public static Rank of(Fleet fleet, Path logDir) {
        return new Rank(fleet.workerIndex(), fleet.workerNum(), logDir);
    }

    public boolean isFirst() {
        return rank == 0;
    }
}
