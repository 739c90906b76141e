package org.fleet4j.launch;

import java.util.stream.IntStream;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;

/**
 * {@code --server_num S --worker_num W}: a parameter-server job on this host, S servers on free ports after the W
 * trainers' ports. The several-host form ({@code --servers}, {@code --workers}) is refused by name.
 */
record ParameterServerFlags(int servers, int workers) {
    /** The flags of {@code options}, checked; null when none of them is given (a collective job). */
    static ParameterServerFlags of(LaunchOptions options) {
        if (options.servers != null || options.workers != null) {
            throw new LaunchException((options.servers != null ? "--servers" : "--workers") + ": parameter servers on"
                    + " several hosts are not available yet; on one host use --server_num S --worker_num W");
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
        return new ParameterServerFlags(options.serverNum, workers);
    }

    /** The servers on the ports after the trainers' (the layout's start port + W onwards). */
    ServerLayout layout(ClusterLayout trainers) {
        int first = trainers.startPort() + trainers.nprocPerNode();
        if (first + servers - 1 > 65535) {
            throw new LaunchException("--start_port " + trainers.startPort() + ": the " + servers + " server port(s) after"
                    + " the trainers' would pass 65535");
        }
        return ServerLayout.allHere(IntStream.range(0, servers)
                .mapToObj(i -> new HostPort(trainers.host(), first + i)).toList());
    }

    /** A strategy file given with --server_num must ask for mode ps, or every server would fail at start. */
    void checkStrategy(LaunchPlan plan) {
        if (plan.strategy() != null && DistributedStrategy.load(plan.strategy()).mode() != Mode.PS) {
            throw new LaunchException("--server_num " + servers + " starts parameter servers, but --strategy "
                    + plan.strategy() + " has mode " + DistributedStrategy.load(plan.strategy()).mode().spelling()
                    + "; set mode: ps in it");
        }
    }
}
