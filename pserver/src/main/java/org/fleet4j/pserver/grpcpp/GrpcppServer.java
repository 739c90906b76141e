package org.fleet4j.pserver.grpcpp;

import io.netty.channel.EventLoop;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.pserver.grpc.GrpcTransport;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;

/**
 * A grpc++ (or star_server) server: the gRPC service on the control endpoint (Hello, barriers, save, load, stats,
 * stop; its Hello names the data port) and the data port for pulls and pushes, on the endpoint map's data endpoint
 * for it (a free port on the same host when the map has none). A worker's stop ends both.
 */
final class GrpcppServer implements PsServer {
    private static final System.Logger LOG = System.getLogger(GrpcppServer.class.getName());

    private final PsOptions options;
    private final DataServer data;
    /** Set once the data port listens (its messages name the control endpoint, or the one asked for before). */
    private volatile PsServer control;

    GrpcppServer(String protocol, TableShard shard, PsOptions options, EndpointMap map, NetworkSettings settings) {
        this.options = options;
        // the network threads own the tables before any call, control or data, can reach them
        NetworkLoops loops = DataServer.ownTables(shard, settings);
        String dataEndpoint = map.dataEndpoint(options.endpoint()).orElse(null);
        InetSocketAddress bind;
        try {
            bind = dataEndpoint == null
                    ? new InetSocketAddress(TcpStore.parseHostPort(options.endpoint(), "endpoint").getHostString(), 0)
                    : TcpStore.parseHostPort(dataEndpoint, "grpc++ data endpoint (" + map.source() + ")");
        } catch (RuntimeException e) {
            giveBack(loops, shard);
            throw e;
        }
        data = new DataServer(shard, loops, options.token(), bind.getHostString(), bind.getPort(),
                options.deadline(), this::endpoint);
        try {
            control = GrpcTransport.serveControl(protocol, shard, options, data);
        } catch (RuntimeException e) {
            data.close();
            throw e;
        }
        LOG.log(System.Logger.Level.INFO, "parameter server " + control.endpoint() + " (" + protocol
                + "): data port " + data.endpoint() + " (" + (dataEndpoint == null ? "a free port: no endpoint map"
                + " names " + options.endpoint() : "from " + map.source()) + "), " + settings.describe() + ", "
                + (NetworkLoops.epoll() ? "epoll" : "NIO"));
    }

    /** When serving fails to start: the network threads end and the shard gets owner threads of its own back. */
    private static void giveBack(NetworkLoops loops, TableShard shard) {
        loops.close();
        shard.runOnOwnThreads();
    }

    @Override
    public String endpoint() {
        PsServer c = control;
        return c != null ? c.endpoint() : options.endpoint();
    }

    /** The data port's endpoint (host:port). */
    String dataEndpoint() {
        return data.endpoint();
    }

    /** Network thread {@code i}: owner {@code i} of the shard's tables. */
    EventLoop networkThread(int i) {
        return data.loop(i);
    }

    Map<Integer, Integer> pinnedThreads() {
        return data.pinnedThreads();
    }

    CopyCount copies() {
        return data.copies();
    }

    /** The data port's calls, as Stats counts them. */
    Map<String, Long> dataCalls() {
        return data.calls();
    }

    @Override
    public boolean awaitStop(Duration timeout) throws InterruptedException {
        return control.awaitStop(timeout);
    }

    @Override
    public void close() {
        try {
            data.close();
        } finally {
            control.close();
        }
    }
}
