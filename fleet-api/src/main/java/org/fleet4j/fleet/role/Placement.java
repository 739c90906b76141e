package org.fleet4j.fleet.role;

import java.util.List;
import org.fleet4j.cluster.Role;

/**
 * What a scheduler's variables say about this process. Either the scheduler starts one process per node (a pod, a
 * Slurm task on a node of its own) and that process is the node's launcher, which starts the node's ranks
 * ({@link Nodes}); or the process is itself one rank or parameter server ({@link Process}).
 */
public sealed interface Placement permits Placement.Nodes, Placement.Process {
    /** The environment that described it ({@link ClusterEnvironment#name()}). */
    String scheduler();

    /** The variables read, as NAME=value, in the order read: what the dry run shows. */
    List<String> variables();

    /** This process's role when the program runs in it directly (Fleet.init without fleetrun). */
    Role role();

    /**
     * One process per node: {@code bin/fleetrun} in it starts the node's ranks.
     *
     * @param nprocPerNode ranks per node when the scheduler says (PET_NPROC_PER_NODE), else null (fleetrun's default)
     * @param master       host:port where rank 0 hosts the rendezvous store; null for a single node
     * @param hosts        every node's host in node order, or empty where the scheduler does not name them
     * @param host         this node's host as the others reach it, or null when the scheduler does not name it
     */
    record Nodes(String scheduler, int nnodes, int nodeRank, Integer nprocPerNode, String master, List<String> hosts,
                 String host, String jobId, List<String> variables) implements Placement {
        public Nodes {
            hosts = List.copyOf(hosts);
            variables = List.copyOf(variables);
            if (nnodes < 1 || nodeRank < 0 || nodeRank >= nnodes) {
                throw new IllegalArgumentException(scheduler + ": node " + nodeRank + " is outside 0.." + (nnodes - 1));
            }
            if (!hosts.isEmpty() && hosts.size() != nnodes) {
                throw new IllegalArgumentException(scheduler + ": " + hosts.size() + " hosts named for " + nnodes + " nodes");
            }
            if (nnodes > 1 && master == null) {
                throw new IllegalArgumentException(scheduler + ": " + nnodes + " nodes need a master host:port");
            }
        }

        /**
         * One rank per node: the pod's process is the rank. Several per node need a launcher to start them.
         *
         * @throws IllegalArgumentException when the scheduler asks for several ranks per node
         */
        @Override
        public Role role() {
            if (nprocPerNode != null && nprocPerNode > 1) {
                throw new IllegalArgumentException(scheduler + ": " + nprocPerNode + " ranks per node are asked for, but this"
                        + " process is one; start the program with bin/fleetrun in each node, which starts them");
            }
            String own = host != null ? host : nnodes == 1 ? "127.0.0.1" : LocalAddress.towards(master, scheduler);
            return Role.trainer(nodeRank, nnodes, 0, 1, nodeRank, nnodes, master, own, jobId, scheduler);
        }
    }

    /** The process is one rank, or one parameter server, of the job. */
    record Process(String scheduler, Role role, List<String> variables) implements Placement {
        public Process {
            variables = List.copyOf(variables);
        }
    }
}
