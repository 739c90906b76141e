package org.fleet4j.launch;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;
import org.fleet4j.text.Quoted;

/**
 * Where the ranks of a job are: how many nodes, which one this is, how many ranks each runs, the ports
 * they get and the rendezvous master (rank 0's store).
 *
 * @param hosts every node's host in node-rank order, or empty when only {@code --master} is known
 * @param host this node's host, as the other nodes reach it
 * @param startPort rank endpoints on a node are host:(startPort + local rank); nodes listed on the same host take
 *                  the next nprocPerNode ports each, in node order, so every rank has its own endpoint
 */
public record ClusterLayout(List<String> hosts, int nnodes, int nodeRank, int nprocPerNode, String host, int startPort, HostPort master) {
    /** Paddle's default first port when several nodes must agree on one without talking. */
    public static final int DEFAULT_START_PORT = 6170;

    public ClusterLayout {
        hosts = List.copyOf(hosts);
    }

    /**
     * Works out the layout from the launcher's flags; nulls are flags left out.
     *
     * @throws LaunchException naming the flag when the flags disagree or a value is out of range
     */
    public static ClusterLayout plan(List<String> ips, Integer nnodes, Integer nodeRank, String master, Integer startPort, int nprocPerNode) {
        if (nprocPerNode < 1) {
            throw new LaunchException("--nproc_per_node " + nprocPerNode + ": expected at least 1");
        }
        if (startPort != null && (startPort < 1 || startPort + nprocPerNode - 1 > 65535)) {
            throw new LaunchException("--start_port " + startPort + ": ports " + startPort + ".." + (startPort + nprocPerNode - 1)
                    + " must lie in 1..65535");
        }
        HostPort givenMaster = master == null ? null : HostPort.parse(master, "--master");
        if (ips != null && !ips.isEmpty()) {
            return withHosts(ips, nnodes, nodeRank, givenMaster, startPort, nprocPerNode);
        }
        int nodes = nnodes == null ? 1 : nnodes;
        if (nodes < 1) {
            throw new LaunchException("--nnodes " + nodes + ": expected at least 1");
        }
        if (nodes == 1) {
            requireRank(nodeRank, 1, "--nnodes 1");
            int port = startPort != null ? startPort : FreePorts.consecutive(nprocPerNode);
            String host = "127.0.0.1";
            return new ClusterLayout(List.of(host), 1, 0, nprocPerNode, host, port, givenMaster != null ? givenMaster : new HostPort(host, port));
        }
        if (givenMaster == null) {
            throw new LaunchException("--nnodes " + nodes + " needs --master HOST:PORT (or --ips h1,h2,...) so the nodes can find each other");
        }
        if (nodeRank == null) {
            throw new LaunchException("--nnodes " + nodes + " needs --rank, this node's rank in 0.." + (nodes - 1));
        }
        requireRank(nodeRank, nodes, "--nnodes " + nodes);
        int port = startPort != null ? startPort : DEFAULT_START_PORT;
        return new ClusterLayout(List.of(), nodes, nodeRank, nprocPerNode, localAddressTowards(givenMaster), port, givenMaster);
    }

    private static ClusterLayout withHosts(List<String> ips, Integer nnodes, Integer nodeRank, HostPort master, Integer startPort, int nprocPerNode) {
        List<String> hosts = ips.stream().map(String::trim).toList();
        if (hosts.stream().anyMatch(String::isEmpty)) {
            throw new LaunchException("--ips '" + String.join(",", ips) + "': a host is empty");
        }
        if (nnodes != null && nnodes != hosts.size()) {
            throw new LaunchException("--nnodes " + nnodes + " disagrees with --ips, which lists " + hosts.size() + " host(s)");
        }
        int rank = nodeRank != null ? nodeRank : localIndex(hosts);
        requireRank(rank, hosts.size(), "--ips " + String.join(",", hosts));
        int port = startPort != null ? startPort : hosts.size() == 1 ? FreePorts.consecutive(nprocPerNode) : DEFAULT_START_PORT;
        long maxPerHost = hosts.stream().mapToLong(h -> hosts.stream().filter(h::equals).count()).max().orElse(1);
        if (port + maxPerHost * nprocPerNode - 1 > 65535) {
            throw new LaunchException("--start_port " + port + ": " + maxPerHost + " nodes on one host of --ips need ports " + port
                    + ".." + (port + maxPerHost * nprocPerNode - 1) + ", beyond 65535");
        }
        HostPort agreed = master != null ? master : new HostPort(hosts.get(0), port);
        return new ClusterLayout(hosts, hosts.size(), rank, nprocPerNode, hosts.get(rank), port, agreed);
    }

    private static void requireRank(Integer rank, int nodes, String context) {
        if (rank != null && (rank < 0 || rank >= nodes)) {
            throw new LaunchException("--rank " + rank + ": expected a node rank in 0.." + (nodes - 1) + " for " + context);
        }
    }

    /** This node's position in {@code --ips}, when exactly one of them is an address of this machine. */
    private static int localIndex(List<String> hosts) {
        if (hosts.size() == 1) {
            return 0;
        }
        Set<InetAddress> local = localAddresses();
        List<Integer> matches = IntStream.range(0, hosts.size()).filter(i -> isLocal(hosts.get(i), local)).boxed().toList();
        if (matches.size() != 1) {
            String why = matches.isEmpty() ? "none of them is an address of this machine" : "several of them are this machine";
            throw new LaunchException("--ips " + String.join(",", hosts) + ": " + why + "; pass --rank with this node's position (0.."
                    + (hosts.size() - 1) + ")");
        }
        return matches.get(0);
    }

    private static boolean isLocal(String host, Set<InetAddress> local) {
        try {
            for (InetAddress address : InetAddress.getAllByName(host)) {
                if (address.isLoopbackAddress() || address.isAnyLocalAddress() || local.contains(address)) {
                    return true;
                }
            }
            return false;
        } catch (UnknownHostException e) {
            throw new LaunchException("--ips: cannot resolve host " + Quoted.of(host), e);
        }
    }

    static Set<InetAddress> localAddresses() {
        Set<InetAddress> addresses = new HashSet<>();
        try {
            for (NetworkInterface nic : NetworkInterface.networkInterfaces().toList()) {
                nic.inetAddresses().forEach(addresses::add);
            }
        } catch (SocketException e) {
            throw new LaunchException("cannot list this machine's network interfaces to find it in --ips (" + e.getMessage() + "); pass --rank", e);
        }
        return addresses;
    }

    /** The local address the kernel would use to reach the master: the one other nodes can reach us on. */
    private static String localAddressTowards(HostPort master) {
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(new InetSocketAddress(master.host(), master.port()));
            InetAddress local = probe.getLocalAddress();
            if (local == null || local.isAnyLocalAddress()) {
                throw new LaunchException("--master " + master + ": no route from this machine to it");
            }
            return local.getHostAddress();
        } catch (IOException | IllegalArgumentException e) {
            throw new LaunchException("--master " + master + ": cannot reach it from this machine (" + e.getMessage() + ")", e);
        }
    }

    public int worldSize() {
        return nnodes * nprocPerNode;
    }

    public int globalRank(int localRank) {
        return nodeRank * nprocPerNode + localRank;
    }

    /** This node's endpoint of one local rank. */
    public HostPort endpoint(int localRank) {
        return new HostPort(host, firstPort(nodeRank) + localRank);
    }

    /** The port of {@code node}'s local rank 0: after those of the nodes listed before it on the same host. */
    private int firstPort(int node) {
        if (hosts.size() != nnodes) {
            return startPort;
        }
        long before = hosts.subList(0, node).stream().filter(hosts.get(node)::equals).count();
        return startPort + (int) before * nprocPerNode;
    }

    /** Every rank's endpoint in global-rank order; empty when the other nodes' hosts are not known here. */
    public Optional<List<String>> allEndpoints() {
        if (hosts.size() != nnodes) {
            return Optional.empty();
        }
        return Optional.of(IntStream.range(0, nnodes).boxed()
                .flatMap(node -> IntStream.range(0, nprocPerNode)
                        .mapToObj(local -> new HostPort(hosts.get(node), firstPort(node) + local).toString()))
                .toList());
    }
}
