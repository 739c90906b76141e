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
        Wire.requireLittleEndian();
        return GrpcPsServer.start(shard, options, PROTOCOL);
    }

    @Override
    public PsConnection connect(String endpoint, PsOptions options) {
        Wire.requireLittleEndian();
        return GrpcPsConnection.open(endpoint, options, PROTOCOL);
    }

    /**
     * The grpc service as the control port of another protocol (grpc++ serves registration, barriers, save, load,
     * stats and stop here, and its tensors elsewhere): Hello answers {@code protocol}, so a worker of another
     * protocol is refused at connect naming both.
     */
    public static PsServer serveControl(TableShard shard, PsOptions options, String protocol) {
        Wire.requireLittleEndian();
        return GrpcPsServer.start(shard, options, protocol);
    }

    /** A control connection to a server of {@code protocol} (see {@link #serveControl}). */
    public static PsConnection connectControl(String endpoint, PsOptions options, String protocol) {
        Wire.requireLittleEndian();
        return GrpcPsConnection.open(endpoint, options, protocol);
    }
}
