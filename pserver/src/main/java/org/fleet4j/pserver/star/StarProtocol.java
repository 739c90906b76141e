package org.fleet4j.pserver.star;

import java.util.Map;
import org.fleet4j.pserver.grpcpp.GrpcppTransport;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;

/**
 * What star_server and star_server_lite share: grpc++'s data path under their own name (control calls over gRPC on
 * the server's endpoint, a step's pull and push as one frame each per server on the data port, answered by the
 * network threads that own the tables), and connections that differ only in whether a push is held for the next
 * pull. ServiceLoader needs a class per protocol, so each is a subclass naming itself.
 */
abstract sealed class StarProtocol implements PsTransport permits StarServerTransport, StarServerLiteTransport {
    private final GrpcppTransport transport;

    StarProtocol(String protocol, boolean overlapPushes) {
        this.transport = GrpcppTransport.forPullPush(protocol, overlapPushes);
    }

    @Override
    public final String protocol() {
        return transport.protocol();
    }

    @Override
    public final String describe(Map<String, String> env, int workers) {
        return transport.describe(env, workers);
    }

    @Override
    public final PsServer serve(TableShard shard, PsOptions options) {
        return transport.serve(shard, options);
    }

    @Override
    public final PsConnection connect(String endpoint, PsOptions options) {
        return transport.connect(endpoint, options);
    }
}
