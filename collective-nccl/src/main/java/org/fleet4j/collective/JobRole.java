package org.fleet4j.collective;

import java.util.Map;

/**
 * Where this process sits in the job, as the launcher describes it with FLEET_* variables.
 *
 * @param master host:port of the rendezvous store that rank 0 hosts; null for a world of one
 * @param host   this node's address, used for the TCP endpoints other ranks dial
 * @param token  the secret every rank of the job holds; the store and the data ports admit only its holders
 */
public record JobRole(int rank, int worldSize, int localRank, int localWorldSize, int nodeRank, String master,
                      String host, String jobId, JobToken token) {

    public JobRole {
        if (worldSize < 1) {
            throw new IllegalArgumentException("world size must be at least 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " is outside 0.." + (worldSize - 1));
        }
        if (localWorldSize < 1 || localRank < 0 || localRank >= localWorldSize) {
            throw new IllegalArgumentException("local rank " + localRank + " is outside 0.." + (localWorldSize - 1));
        }
        if (nodeRank < 0) {
            throw new IllegalArgumentException("node rank must be non-negative, got " + nodeRank);
        }
        if (worldSize > 1 && (master == null || master.isBlank())) {
            throw new IllegalArgumentException("a world of " + worldSize + " ranks needs a master host:port (FLEET_MASTER)");
        }
        if (token == null) {
            throw new IllegalArgumentException("rank " + rank + " has no job token");
        }
    }

    /** A world of one, for programs started without a launcher. */
    public static JobRole single() {
        return new JobRole(0, 1, 0, 1, 0, null, "127.0.0.1", "local-" + ProcessHandle.current().pid(), JobToken.random());
    }

    /**
     * Reads FLEET_RANK, FLEET_WORLD_SIZE, ... from the environment; a missing FLEET_WORLD_SIZE means a world of one.
     * The job token comes from FLEET_JOB_TOKEN or FLEET_JOB_TOKEN_FILE ({@link JobToken#fromEnvironment}).
     */
    public static JobRole fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    public static JobRole fromEnvironment(Map<String, String> env) {
        if (env.get("FLEET_WORLD_SIZE") == null) {
            return single();
        }
        int world = intVar(env, "FLEET_WORLD_SIZE", null);
        int rank = intVar(env, "FLEET_RANK", null);
        int localWorld = intVar(env, "FLEET_LOCAL_WORLD_SIZE", world);
        int localRank = intVar(env, "FLEET_LOCAL_RANK", rank % localWorld);
        int nodeRank = intVar(env, "FLEET_NODE_RANK", 0);
        String host = env.getOrDefault("FLEET_HOST", "127.0.0.1");
        String job = env.getOrDefault("FLEET_JOB_ID", "fleet4j");
        return new JobRole(rank, world, localRank, localWorld, nodeRank, env.get("FLEET_MASTER"), host, job,
                JobToken.fromEnvironment(env, world));
    }

    private static int intVar(Map<String, String> env, String name, Integer fallback) {
        String v = env.get(name);
        if (v == null) {
            if (fallback == null) {
                throw new IllegalArgumentException("environment variable " + name + " is not set (expected an integer)");
            }
            return fallback;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("environment variable " + name + "='" + v + "' is not an integer");
        }
    }
}
