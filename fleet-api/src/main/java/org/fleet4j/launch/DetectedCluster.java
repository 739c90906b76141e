package org.fleet4j.launch;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.Role;
import org.fleet4j.fleet.role.ClusterDetector;
import org.fleet4j.fleet.role.FleetRunEnvironment;
import org.fleet4j.fleet.role.LocalAddress;
import org.fleet4j.fleet.role.Placement;

/**
 * The scheduler that placed this launcher, found by {@link ClusterDetector} in the launcher's environment, and the
 * layout it gives: a pod or a Slurm task alone on its node is a node of the job, and fleetrun starts its ranks; an MPI
 * rank, a torchrun worker or one of several Slurm tasks on a node is one rank, and fleetrun starts that one.
 * Flags win: with {@code --ips}, {@code --nnodes}, {@code --rank} or {@code --servers}/{@code --workers} the
 * environment is not read at all, and {@code --master}, {@code --start_port} and {@code --nproc_per_node} override
 * what it says. fleetrun's own variables, which a shell may have kept from an earlier rank, are never read here.
 *
 * @param placement what the scheduler's variables say
 */
record DetectedCluster(Placement placement) {
    /** The cluster of {@code env}, or null where flags place the job or no scheduler's variables are present. */
    static DetectedCluster find(LaunchOptions options, Map<String, String> env) {
        if (options.ips != null || options.nnodes != null || options.nodeRank != null || options.servers != null
                || options.workers != null) {
            return null;
        }
        try {
            return ClusterDetector.only(e -> !(e instanceof FleetRunEnvironment)).detect(env).map(DetectedCluster::new)
                    .orElse(null);
        } catch (IllegalArgumentException e) {
            throw new LaunchException(e.getMessage(), e);
        }
    }

    /** Ranks this node starts: the flag, else what the scheduler says (null: fleetrun's default). */
    Integer nprocPerNode(Integer flag) {
        if (placement instanceof Placement.Process p) {
            if (flag != null && flag != 1) {
                throw new LaunchException("--nproc_per_node " + flag + ": " + p.scheduler() + " started this process as one"
                        + " rank (" + p.role().describe() + "); leave out --nproc_per_node, or start one fleetrun per node"
                        + " (docs/CLUSTERS.md)");
            }
            return 1;
        }
        Placement.Nodes nodes = (Placement.Nodes) placement;
        return flag != null ? flag : nodes.nprocPerNode();
    }

    /** Whether this pod holds a parameter server of the scheduler's job (and so no trainer). */
    boolean serverHere() {
        return placement instanceof Placement.Process p && p.role().isServer();
    }

    /** The job's parameter servers as the scheduler lists them, and the one this pod starts; none in collective jobs. */
    ServerLayout servers() {
        Role role = placement.role();
        if (!(placement instanceof Placement.Process) || role.serverEndpoints().isEmpty()) {
            return ServerLayout.none();
        }
        List<HostPort> endpoints = role.serverEndpoints().stream()
                .map(e -> HostPort.parse(e, placement.scheduler() + " parameter server")).toList();
        return new ServerLayout(endpoints, role.isServer() ? List.of(role.serverIndex()) : List.of());
    }

    /** Parameter servers on this host alone (--server_num) cannot be a part of a job the scheduler spreads wider. */
    void checkOneHostServers(Integer serverNum) {
        if (serverNum != null && worldOfLaunchers() > 1) {
            throw new LaunchException("--server_num " + serverNum + " runs a parameter-server job on this host only, but "
                    + placement.scheduler() + " placed this launcher in a job of " + worldOfLaunchers() + " processes; run"
                    + " one collective job per cluster, or a Volcano job with a ps task (docs/CLUSTERS.md)");
        }
    }

    private int worldOfLaunchers() {
        return placement instanceof Placement.Nodes n ? n.nnodes() : placement.role().worldSize();
    }

    /**
     * The layout of this node's ranks.
     *
     * @param resolveHost false in the dry run: a host name that only the cluster's DNS knows is then shown, not looked up
     */
    ClusterLayout layout(String masterFlag, Integer startPort, int nprocPerNode, boolean resolveHost) {
        int nnodes;
        int nodeRank;
        String master;
        List<String> hosts;
        String host;
        if (placement instanceof Placement.Nodes n) {
            nnodes = n.nnodes();
            nodeRank = n.nodeRank();
            master = n.master();
            hosts = n.hosts();
            host = n.host() != null ? n.host() : hosts.isEmpty() ? null : hosts.get(nodeRank);
        } else if (serverHere()) {
            // a server's pod: the trainers' world is the job's, their master is not known here (the trainers meet there)
            Role role = placement.role();
            nnodes = role.workerNum();
            nodeRank = 0;
            master = role.serverEndpoint();
            hosts = List.of();
            host = role.host();
        } else {
            Role role = placement.role();
            nnodes = role.worldSize();
            nodeRank = role.rank();
            master = role.master();
            hosts = List.of();
            host = role.host();
        }
        if (nnodes == 1) {
            return ClusterLayout.plan(null, null, null, masterFlag, startPort, nprocPerNode);
        }
        HostPort agreed = masterFlag != null ? HostPort.parse(masterFlag, "--master")
                : HostPort.parse(master, placement.scheduler() + " master");
        if (host == null) {
            host = resolveHost ? towards(agreed) : shownHost(agreed);
        }
        int port = startPort != null ? startPort : ClusterLayout.DEFAULT_START_PORT;
        return new ClusterLayout(hosts, nnodes, nodeRank, nprocPerNode, host, port, agreed);
    }

    /** In the dry run the master may be a name only the cluster's DNS knows: then the host is only named. */
    private String shownHost(HostPort master) {
        try {
            return LocalAddress.towards(master.toString(), placement.scheduler());
        } catch (IllegalArgumentException e) {
            return "(this node)";
        }
    }

    private String towards(HostPort master) {
        try {
            return LocalAddress.towards(master.toString(), placement.scheduler());
        } catch (IllegalArgumentException e) {
            throw new LaunchException(e.getMessage(), e);
        }
    }

    /** The dry run's account: which cluster, what it read, and the role of every process this launcher starts. */
    String describe(ClusterLayout layout) {
        List<String> lines = new ArrayList<>();
        String kind = placement instanceof Placement.Nodes ? "this launcher is node " + layout.nodeRank() + " of "
                + layout.nnodes() + " and starts " + layout.nprocPerNode() + " rank(s)"
                : serverHere() ? "this process is " + placement.role().describe() + "; fleetrun starts it alone"
                : "this process is one rank of " + layout.worldSize() + "; fleetrun starts it alone";
        if (serverHere()) {
            lines.add("cluster: " + placement.scheduler() + ": " + kind);
            lines.add("  read: " + String.join(" ", placement.variables()));
            return String.join("\n", lines);
        }
        lines.add("cluster: " + placement.scheduler() + ": " + kind + ", master " + layout.master());
        lines.add("  read: " + String.join(" ", placement.variables()));
        for (int local = 0; local < layout.nprocPerNode(); local++) {
            lines.add("  rank " + layout.globalRank(local) + " of " + layout.worldSize() + ": node " + layout.nodeRank()
                    + " of " + layout.nnodes() + ", local rank " + local + " of " + layout.nprocPerNode() + ", endpoint "
                    + layout.endpoint(local));
        }
        return String.join("\n", lines);
    }

    /** The dry run's line when no scheduler placed the launcher. */
    static String describeFlags(LaunchOptions options, int nnodes) {
        boolean flags = options.ips != null || options.nnodes != null || options.nodeRank != null || options.servers != null;
        return flags ? "cluster: from the flags: " + nnodes + " node(s)"
                : "cluster: none found in the environment (no scheduler's variables): this node alone";
    }
}
