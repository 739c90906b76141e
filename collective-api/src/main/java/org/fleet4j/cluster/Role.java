package org.fleet4j.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.fleet4j.text.Quoted;

/**
 * This process's place in a job, whichever launcher started it: a trainer (worker) of the data-parallel world, or a
 * parameter server. The rank fields place the process among the processes of its own kind: a trainer's rank is its
 * trainer id among {@code worldSize} trainers; a server's rank is its position in {@code serverEndpoints}, whose
 * length is then its world size.
 *
 * @param kind            trainer or parameter server (Paddle's TRAINING_ROLE)
 * @param rank            index among the processes of this kind, 0..worldSize-1
 * @param worldSize       number of processes of this kind
 * @param localRank       index among the processes of this kind on this node
 * @param localWorldSize  processes of this kind on this node
 * @param nodeRank        this node's index, 0..nodeNum-1
 * @param nodeNum         number of nodes the processes of this kind run on
 * @param master          host:port of the rendezvous store that trainer 0 hosts; null for a world of one and for servers
 * @param host            this node's address as the other nodes reach it
 * @param jobId           name shared by every process of the job
 * @param source          which launcher's variables described the role ("fleetrun", "torchrun", ...)
 * @param workerNum       number of trainers in the job (a trainer's own world size)
 * @param serverEndpoints every parameter server's host:port in server-index order; empty in collective mode
 */
public record Role(Kind kind, int rank, int worldSize, int localRank, int localWorldSize, int nodeRank, int nodeNum,
                   String master, String host, String jobId, String source, int workerNum, List<String> serverEndpoints) {

    /** What the process does in the job; the names are Paddle's TRAINING_ROLE values. */
    public enum Kind { TRAINER, PSERVER }

    public Role {
        if (kind == null) {
            throw new IllegalArgumentException(source + ": the role has no kind (TRAINER or PSERVER)");
        }
        serverEndpoints = List.copyOf(serverEndpoints);
        if (worldSize < 1) {
            throw new IllegalArgumentException(source + ": world size must be at least 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException(source + ": rank " + rank + " is outside 0.." + (worldSize - 1));
        }
        if (localWorldSize < 1 || localWorldSize > worldSize) {
            throw new IllegalArgumentException(source + ": local world size " + localWorldSize + " is outside 1.." + worldSize);
        }
        if (localRank < 0 || localRank >= localWorldSize) {
            throw new IllegalArgumentException(source + ": local rank " + localRank + " is outside 0.." + (localWorldSize - 1));
        }
        if (nodeNum < 1 || nodeRank < 0 || nodeRank >= nodeNum) {
            throw new IllegalArgumentException(source + ": node rank " + nodeRank + " is outside 0.." + (nodeNum - 1));
        }
        if (workerNum < 1) {
            throw new IllegalArgumentException(source + ": the job needs at least 1 trainer, got " + workerNum);
        }
        if (kind == Kind.TRAINER) {
            if (workerNum != worldSize) {
                throw new IllegalArgumentException(source + ": a trainer's world of " + worldSize + " is not the job's "
                        + workerNum + " trainers");
            }
            if (worldSize > 1 && (master == null || master.isBlank())) {
                throw new IllegalArgumentException(source + ": a world of " + worldSize
                        + " ranks needs the master's host:port, where rank 0 hosts the rendezvous store");
            }
        } else if (serverEndpoints.size() != worldSize) {
            throw new IllegalArgumentException(source + ": server " + rank + " counts " + worldSize + " servers but "
                    + serverEndpoints.size() + " endpoints are listed");
        }
    }

    /** A trainer in collective mode: no parameter servers. */
    public static Role trainer(int rank, int worldSize, int localRank, int localWorldSize, int nodeRank, int nodeNum,
                               String master, String host, String jobId, String source) {
        return new Role(Kind.TRAINER, rank, worldSize, localRank, localWorldSize, nodeRank, nodeNum, master, host, jobId,
                source, worldSize, List.of());
    }

    /**
     * Parameter server {@code index} of {@code endpoints}; its node and local rank follow from the distinct hosts of the
     * endpoints, in order, as the trainers' do from theirs.
     */
    public static Role server(int index, List<String> endpoints, int workerNum, String jobId, String source) {
        if (index < 0 || index >= endpoints.size()) {
            throw new IllegalArgumentException(source + ": server index " + index + " is outside 0.." + (endpoints.size() - 1));
        }
        List<String> hosts = new ArrayList<>();
        endpoints.forEach(e -> hosts.add(hostOf(e)));
        String host = hosts.get(index);
        List<String> nodes = hosts.stream().distinct().toList();
        int localWorld = (int) hosts.stream().filter(host::equals).count();
        int localRank = (int) hosts.subList(0, index).stream().filter(host::equals).count();
        return new Role(Kind.PSERVER, index, endpoints.size(), localRank, localWorld, nodes.indexOf(host), nodes.size(), null,
                host, jobId, source, workerNum, endpoints);
    }

    /** This role with the parameter servers a trainer pushes to and pulls from. */
    public Role withServerEndpoints(List<String> endpoints) {
        return new Role(kind, rank, worldSize, localRank, localWorldSize, nodeRank, nodeNum, master, host, jobId, source,
                workerNum, endpoints);
    }

    /** A world of one: a program started without a launcher. */
    public static Role single() {
        return trainer(0, 1, 0, 1, 0, 1, null, "127.0.0.1", "local-" + ProcessHandle.current().pid(), "no launcher");
    }

    /**
     * Reads FLEET_RANK, FLEET_WORLD_SIZE, ... (the variables of {@code bin/fleetrun}) for programs of this module that
     * open a group without {@code Fleet}; a missing FLEET_WORLD_SIZE means a world of one.
     */
    public static Role fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    public static Role fromEnvironment(Map<String, String> env) {
        if (env.get("FLEET_WORLD_SIZE") == null) {
            return single();
        }
        int world = intVar(env, "FLEET_WORLD_SIZE", null);
        int rank = intVar(env, "FLEET_RANK", null);
        int localWorld = intVar(env, "FLEET_LOCAL_WORLD_SIZE", world);
        int localRank = intVar(env, "FLEET_LOCAL_RANK", rank % localWorld);
        int nodes = intVar(env, "FLEET_NNODES", Math.max(1, world / localWorld));
        int nodeRank = intVar(env, "FLEET_NODE_RANK", 0);
        String host = env.getOrDefault("FLEET_HOST", "127.0.0.1");
        String job = env.getOrDefault("FLEET_JOB_ID", "fleet4j");
        return trainer(rank, world, localRank, localWorld, nodeRank, nodes, env.get("FLEET_MASTER"), host, job, "fleetrun");
    }

    public boolean isServer() {
        return kind == Kind.PSERVER;
    }

    public boolean isWorker() {
        return kind == Kind.TRAINER;
    }

    /** The trainer id; only a trainer has one. */
    public int workerIndex() {
        if (!isWorker()) {
            throw new IllegalStateException(describe() + " is a parameter server: it has no worker index");
        }
        return rank;
    }

    /** The position in {@link #serverEndpoints()}; only a parameter server has one. */
    public int serverIndex() {
        if (!isServer()) {
            throw new IllegalStateException(describe() + " is a trainer: it has no server index");
        }
        return rank;
    }

    public int serverNum() {
        return serverEndpoints.size();
    }

    /** A parameter server's own host:port. */
    public String serverEndpoint() {
        return serverEndpoints.get(serverIndex());
    }

    public boolean isFirst() {
        return rank == 0;
    }

    /**
     * What every process of this role's job knows alike, and anyone who can see the job may know too: the servers and
     * the number of trainers of a parameter-server job (its servers and trainers see the same), else the job id, the
     * master and the world size. A job that runs without a secret (FLEET_INSECURE=1) derives its token from it.
     */
    public String publicJobFacts() {
        return serverEndpoints.isEmpty() ? "collective job " + jobId + " at " + master + " of " + worldSize + " ranks"
                : "parameter-server job of servers " + String.join(",", serverEndpoints) + " and " + workerNum + " trainers";
    }

    /** "rank 1 of 4 (node 0 of 2, local rank 1 of 2) from torchrun", or "server 0 of 2 (10.0.0.1:6000) for 4 trainers from ...". */
    public String describe() {
        if (isServer()) {
            return "server " + rank + " of " + worldSize + " (" + serverEndpoints.get(rank) + ") for " + workerNum
                    + " trainer(s) from " + source;
        }
        return "rank " + rank + " of " + worldSize + " (node " + nodeRank + " of " + nodeNum + ", local rank " + localRank
                + " of " + localWorldSize + ") from " + source;
    }

    /** The host of a host:port endpoint (brackets of an IPv6 address kept). */
    private static String hostOf(String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("endpoint " + Quoted.of(endpoint) + " is not host:port");
        }
        return endpoint.substring(0, colon);
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
            throw new IllegalArgumentException("environment variable " + name + "=" + Quoted.of(v) + " is not an integer");
        }
    }
}
