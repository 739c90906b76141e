package org.fleet4j.launch;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.fleet4j.pserver.grpcpp.EndpointMap;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;

/**
 * {@code --server_num S --worker_num W}: a parameter-server job on this host, S servers on free ports after the W
 * trainers' ports; or {@code --servers ip:port,... --workers ip:port,...} on several hosts ({@link ParameterServerHosts}).
 *
 * @param servers the servers this host starts
 * @param workers the trainers this host starts
 * @param hosts the several-host lists; null on one host
 */
record ParameterServerFlags(int servers, int workers, ParameterServerHosts hosts) {
    /** The flags of {@code options}, checked; null when none of them is given (a collective job). */
    static ParameterServerFlags of(LaunchOptions options) {
        if (options.servers != null || options.workers != null) {
            return ofLists(options);
        }
        if (options.serverNum == null && options.workerNum == null) {
            return null;
        }
        if (options.serverNum == null) {
            throw new LaunchException("--worker_num " + options.workerNum + " needs --server_num S, the number of"
                    + " parameter servers to start");
        }
        if (options.serverNum < 1) {
            throw new LaunchException("--server_num " + options.serverNum + ": expected at least 1");
        }
        if (options.workerNum != null && options.workerNum < 1) {
            throw new LaunchException("--worker_num " + options.workerNum + ": expected at least 1");
        }
        if (options.workerNum != null && options.nprocPerNode != null && !options.workerNum.equals(options.nprocPerNode)) {
            throw new LaunchException("--worker_num " + options.workerNum + " disagrees with --nproc_per_node "
                    + options.nprocPerNode + "; in parameter-server mode give --worker_num only");
        }
        if (options.nnodes != null && options.nnodes > 1 || options.ips != null && options.ips.size() > 1) {
            throw new LaunchException("--server_num runs a parameter-server job on this host only; leave out --nnodes"
                    + " and --ips (several hosts are not available yet in parameter-server mode)");
        }
        int workers = options.workerNum != null ? options.workerNum : options.nprocPerNode != null ? options.nprocPerNode : 1;
        return new ParameterServerFlags(options.serverNum, workers, null);
    }

    /** --servers and --workers say where every process runs: the one-host flags and the node flags would contradict them. */
    private static ParameterServerFlags ofLists(LaunchOptions options) {
        List<String> clashing = new ArrayList<>();
        if (options.serverNum != null) {
            clashing.add("--server_num");
        }
        if (options.workerNum != null) {
            clashing.add("--worker_num");
        }
        if (options.nprocPerNode != null) {
            clashing.add("--nproc_per_node");
        }
        if (options.nnodes != null) {
            clashing.add("--nnodes");
        }
        if (options.ips != null) {
            clashing.add("--ips");
        }
        if (options.nodeRank != null) {
            clashing.add("--rank");
        }
        if (options.master != null) {
            clashing.add("--master");
        }
        if (options.startPort != null) {
            clashing.add("--start_port");
        }
        if (!clashing.isEmpty()) {
            throw new LaunchException("--servers/--workers place every process themselves; leave out " + String.join(", ", clashing));
        }
        ParameterServerHosts hosts = ParameterServerHosts.of(options.servers, options.workers);
        return new ParameterServerFlags(hosts.servers().local().size(), hosts.trainers().nprocPerNode(), hosts);
    }

    /** The servers of the lists, else on the ports after the trainers' (the layout's start port + W onwards). */
    ServerLayout layout(ClusterLayout trainers) {
        if (hosts != null) {
            return hosts.servers();
        }
        int first = trainers.startPort() + trainers.nprocPerNode();
        if (first + servers - 1 > 65535) {
            throw new LaunchException("--start_port " + trainers.startPort() + ": the " + servers + " server port(s) after"
                    + " the trainers' would pass 65535");
        }
        return ServerLayout.allHere(IntStream.range(0, servers)
                .mapToObj(i -> new HostPort(trainers.host(), first + i)).toList());
    }

    /**
     * A strategy file given with --server_num must ask for mode ps, or every server would fail at start (and a trainer
     * would refuse to train without them). A strategy set in the program's code is checked by Fleet.init.
     */
    void checkStrategy(LaunchPlan plan) {
        if (plan.strategy() != null && DistributedStrategy.load(plan.strategy()).mode() != Mode.PS) {
            throw new LaunchException("--server_num " + servers + " starts parameter servers, but --strategy "
                    + plan.strategy() + " has mode " + DistributedStrategy.load(plan.strategy()).mode().spelling()
                    + "; set mode: ps in it");
        }
    }

    /**
     * The {@code .endpoint_map} of the launcher's working directory, which every process of the job reads: a bad map is
     * refused here, before anything starts, instead of by each server and worker, and so is a data port that another
     * process of the job listens on (a trainer, the rendezvous store, a server), which only the launcher knows.
     */
    static void checkEndpointMap(LaunchPlan plan, Path workDir) {
        try {
            EndpointMap map = EndpointMap.discover(workDir, Map.of());
            Map<String, String> taken = new LinkedHashMap<>();
            List<String> trainers = plan.layout().allEndpoints().orElseGet(() -> IntStream.range(0,
                    plan.layout().nprocPerNode()).mapToObj(i -> plan.layout().endpoint(i).toString()).toList());
            int firstRank = plan.layout().allEndpoints().isPresent() ? 0 : plan.layout().globalRank(0);
            for (int i = 0; i < trainers.size(); i++) {
                taken.put(trainers.get(i), "rank " + (firstRank + i) + "'s endpoint");
            }
            taken.merge(plan.layout().master().toString(), "the rendezvous store's endpoint",
                    (rank, store) -> rank + " (and the rendezvous store's)");
            List<HostPort> servers = plan.servers().endpoints();
            for (int i = 0; i < servers.size(); i++) {
                taken.putIfAbsent(servers.get(i).toString(), "server " + i + "'s endpoint");
            }
            map.checkFree(taken);
        } catch (IllegalArgumentException e) {
            throw new LaunchException(e.getMessage(), e);
        }
    }

    /** A job whose servers a scheduler placed: a strategy file must ask for mode ps, as with --server_num. */
    static void checkPsStrategy(LaunchPlan plan, String why) {
        if (plan.strategy() != null && DistributedStrategy.load(plan.strategy()).mode() != Mode.PS) {
            throw new LaunchException(why + ", but --strategy " + plan.strategy() + " has mode "
                    + DistributedStrategy.load(plan.strategy()).mode().spelling() + "; set mode: ps in it");
        }
    }

    /** A job without servers: a strategy file of mode ps would have every trainer look for servers that never come. */
    static void checkNoPsStrategy(LaunchPlan plan) {
        if (plan.strategy() != null && DistributedStrategy.load(plan.strategy()).mode() == Mode.PS) {
            throw new LaunchException("--strategy " + plan.strategy() + " has mode ps, but the job has no parameter"
                    + " servers; start them with --server_num S (or --servers/--workers), or set mode: collective");
        }
    }
}
