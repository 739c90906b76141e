package org.fleet4j.pserver.grpc;

import java.time.Duration;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;

/**
 * The {@code grpc} protocol: grpc-java over Netty, the service of {@code parameter_server.proto}, so that any gRPC
 * client can call a server. See docs/PSERVER.md, "Wire protocol: grpc".
 */
public final class GrpcTransport implements PsTransport {
    public static final String PROTOCOL = "grpc";
    /** The largest request or reply either end accepts: a dense block or sparse request of up to 1 GiB. */
    static final int MAX_MESSAGE_BYTES = 1 << 30;
    /** A connection with no call under way for this long is closed (a worker's channel reconnects on its next call). */
    static final Duration IDLE_CONNECTION = Duration.ofMinutes(5);

    @Override
    public String protocol() {
        return PROTOCOL;
    }

    @Override
    public PsServer serve(TableShard shard, PsOptions options) {
        return serve(PROTOCOL, shard, options);
    }

    @Override
    public PsConnection connect(String endpoint, PsOptions options) {
        return connect(PROTOCOL, endpoint, options, false);
    }

    /**
     * This protocol's service and security for another protocol that serves the same calls (star_server), or its
     * control calls (grpc++ serves registration, barriers, save, load, stats and stop here, its tensors elsewhere):
     * Hello answers {@code protocol}, so a worker of another protocol is refused at connect naming both. Each
     * connection's calls run in arrival order on its network thread, whatever the protocol.
     */
    public static PsServer serve(String protocol, TableShard shard, PsOptions options) {
        Wire.requireLittleEndian();
        return GrpcPsServer.start(protocol, shard, options);
    }

    /**
     * A connection for {@code protocol} (named in Hello). {@code overlapPushes}: a push is held and sent right after
     * the next pull, both in flight at once (star_server_lite; any other call sends it first).
     */
    public static PsConnection connect(String protocol, String endpoint, PsOptions options, boolean overlapPushes) {
        Wire.requireLittleEndian();
        return GrpcPsConnection.open(protocol, endpoint, options, overlapPushes);
    }
}
