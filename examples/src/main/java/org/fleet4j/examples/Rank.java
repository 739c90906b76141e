package org.fleet4j.examples;

import java.nio.file.Path;

/** This process's place in the job, as the launcher describes it in FLEET_* variables (none = a world of one). */
public record Rank(int rank, int worldSize, Path logDir) {

    public static Rank fromEnvironment(String logDirFlag) {
        int rank = intVar("FLEET_RANK", 0);
        int world = intVar("FLEET_WORLD_SIZE", 1);
        if (world < 1 || rank < 0 || rank >= world) {
            throw new IllegalArgumentException("FLEET_RANK=" + rank + " is not a rank of FLEET_WORLD_SIZE=" + world);
        }
        String dir = logDirFlag != null ? logDirFlag : System.getenv().getOrDefault("FLEET_LOG_DIR", "log");
        return new Rank(rank, world, Path.of(dir));
    }

    private static int intVar(String name, int dflt) {
        String v = System.getenv(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("environment variable " + name + "='" + v + "' is not an integer");
        }
    }

    /** Built-in programs train on one rank until data-parallel training lands; say so rather than mistrain. */
    public void requireSingle(String program) {
        if (worldSize != 1) {
            throw new IllegalArgumentException(program + ": data-parallel training over " + worldSize
                    + " ranks is not available yet; run it with --nproc_per_node 1");
        }
    }

    public boolean isFirst() {
        return rank == 0;
    }
}
