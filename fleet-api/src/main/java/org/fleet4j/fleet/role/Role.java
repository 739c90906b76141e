package org.fleet4j.fleet.role;

/**
 * This process's place in a data-parallel job, whichever launcher started it.
 *
 * @param rank           global rank, 0..worldSize-1
 * @param worldSize      number of worker processes in the job
 * @param localRank      rank among the workers on this node
 * @param localWorldSize workers on this node
 * @param nodeRank       this node's index, 0..nodeNum-1
 * @param nodeNum        number of nodes
 * @param master         host:port of the rendezvous store that rank 0 hosts; null for a world of one
 * @param host           this node's address as the other nodes reach it
 * @param jobId          name shared by every rank of the job
 * @param source         which launcher's variables described the role ("fleetrun", "torchrun", ...)
 */
public record Role(int rank, int worldSize, int localRank, int localWorldSize, int nodeRank, int nodeNum,
                   String master, String host, String jobId, String source) {

    public Role {
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
        if (worldSize > 1 && (master == null || master.isBlank())) {
            throw new IllegalArgumentException(source + ": a world of " + worldSize
                    + " ranks needs the master's host:port, where rank 0 hosts the rendezvous store");
        }
    }

    /** A world of one: a program started without a launcher. */
    public static Role single() {
        return new Role(0, 1, 0, 1, 0, 1, null, "127.0.0.1", "local-" + ProcessHandle.current().pid(), "no launcher");
    }

    public boolean isFirst() {
        return rank == 0;
    }

    /** "rank 1 of 4 (node 0 of 2, local rank 1 of 2) from torchrun". */
    public String describe() {
        return "rank " + rank + " of " + worldSize + " (node " + nodeRank + " of " + nodeNum + ", local rank " + localRank
                + " of " + localWorldSize + ") from " + source;
    }
}
