package org.fleet4j.pserver.grpcpp;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import org.fleet4j.collective.TcpStore;
import org.fleet4j.pserver.grpc.GrpcTransport;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;

/**
 * A grpc++ server: the gRPC service on the control endpoint (Hello, barriers, save, load, stats, stop) and the data
 * port for pulls and pushes, on the endpoint map's data endpoint for it (a free port on the same host when the map
 * has none). A worker's stop ends both.
 */
final class GrpcppServer implements PsServer {
    private static final System.Logger LOG = System.getLogger(GrpcppServer.class.getName());

    private final PsServer control;
    private final DataServer data;

    GrpcppServer(TableShard shard, PsOptions options, EndpointMap map, NetworkSettings settings) {
        control = GrpcTransport.serve(GrpcppTransport.PROTOCOL, shard, options);
        String dataEndpoint = map.dataEndpoint(options.endpoint()).orElse(null);
        InetSocketAddress bind = dataEndpoint == null
                ? new InetSocketAddress(TcpStore.parseHostPort(control.endpoint(), "endpoint").getHostString(), 0)
                : TcpStore.parseHostPort(dataEndpoint, "grpc++ data endpoint (" + map.source() + ")");
        try {
            data = new DataServer(shard, options.token(), settings, bind.getHostString(), bind.getPort(),
                    options.deadline(), control::endpoint);
        } catch (RuntimeException e) {
            control.close();
            throw e;
        }
        LOG.log(System.Logger.Level.INFO, "parameter server " + control.endpoint() + ": grpc++ data port "
                + data.endpoint() + " (" + (dataEndpoint == null ? "a free port: no endpoint map names "
                + options.endpoint() : "from " + map.source()) + "), " + settings.describe() + ", "
                + (NetworkLoops.epoll() ? "epoll" : "NIO"));
    }

    @Override
    public String endpoint() {
        return control.endpoint();
    }

    /** The data port's endpoint (host:port). */
    String dataEndpoint() {
        return data.endpoint();
    }

    Map<Integer, Integer> pinnedThreads() {
        return data.pinnedThreads();
    }

    CopyCount copies() {
        return data.copies();
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
