package org.fleet4j.pserver.grpcpp;

import java.util.List;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;

/** A grpc++ server in this JVM and workers' transports that know its data port, as an endpoint map would say. */
final class Loopback {
    private Loopback() {
    }

    static GrpcppServer serve(TableShard shard, PsOptions options, NetworkSettings settings) {
        return (GrpcppServer) new GrpcppTransport(EndpointMap.empty(), settings, null).serve(shard, options);
    }

    /** A worker's transport whose endpoint map names {@code server}'s data port. */
    static GrpcppTransport workerOf(GrpcppServer server, NetworkSettings settings) {
        return new GrpcppTransport(EndpointMap.parse(List.of(server.endpoint() + "=" + server.dataEndpoint()),
                "test"), null, settings);
    }

    static PsConnection connect(GrpcppServer server, PsOptions options) {
        return connect(server, options, 2);
    }

    /** A worker's connection with {@code workerThreads} network threads (0: its callers do the I/O). */
    static PsConnection connect(GrpcppServer server, PsOptions options, int workerThreads) {
        return workerOf(server, new NetworkSettings(workerThreads, false, false)).connect(server.endpoint(), options);
    }
}
