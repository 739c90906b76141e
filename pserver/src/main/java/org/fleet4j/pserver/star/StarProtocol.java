package org.fleet4j.pserver.star;

import org.fleet4j.pserver.grpc.GrpcTransport;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;

/**
 * What star_server and star_server_lite share: the grpc protocol's service and security under their own name, and
 * connections that differ only in whether a push is held for the next pull. ServiceLoader needs a class per
 * protocol, so each is a subclass naming itself.
 */
abstract sealed class StarProtocol implements PsTransport permits StarServerTransport, StarServerLiteTransport {
    private final String protocol;
    private final boolean overlapPushes;

    StarProtocol(String protocol, boolean overlapPushes) {
        this.protocol = protocol;
        this.overlapPushes = overlapPushes;
    }

    @Override
    public final String protocol() {
        return protocol;
    }

    @Override
    public final PsServer serve(TableShard shard, PsOptions options) {
        return GrpcTransport.serve(protocol, shard, options);
    }

    @Override
    public final PsConnection connect(String endpoint, PsOptions options) {
        return GrpcTransport.connect(protocol, endpoint, options, overlapPushes);
    }
}
