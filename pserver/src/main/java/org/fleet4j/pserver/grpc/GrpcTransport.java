package org.fleet4j.pserver.grpc;

import io.grpc.netty.shaded.io.netty.buffer.AdaptiveByteBufAllocator;
import io.grpc.netty.shaded.io.netty.buffer.ByteBufAllocator;
import java.time.Duration;
import java.util.Map;
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
    /**
     * The buffers of every grpc socket in the process, servers' and workers': Netty's adaptive allocator (direct
     * memory), not the pool of 2 MiB chunks grpc-java installs by default. A message of several MiB (a fused step's
     * dense tensors) holds its received frames until it is whole; in 2 MiB chunks that emptied several chunks a
     * message, which the pool then freed and allocated again, zeroed, for the next one. The profile and the figures
     * are in docs/performance/pserver.md.
     */
    static final ByteBufAllocator BUFFERS = new AdaptiveByteBufAllocator(true, false);

    @Override
    public String protocol() {
        return PROTOCOL;
    }

    @Override
    public PsServer serve(TableShard shard, PsOptions options) {
        return GrpcPsServer.start(PROTOCOL, shard, options, null);
    }

    @Override
    public PsConnection connect(String endpoint, PsOptions options) {
        Wire.requireLittleEndian();
        return GrpcPsConnection.open(PROTOCOL, endpoint, options);
    }

    /**
     * This protocol's service and security for the control calls of another protocol (grpc++ and the star_server
     * protocols serve registration, barriers, save, load, stats and stop here, their tensors on {@code dataPort}):
     * Hello answers {@code protocol}, so a worker of another protocol is refused at connect naming both, and tells
     * the data port's endpoint; Stats counts the data port's calls too.
     */
    public static PsServer serveControl(String protocol, TableShard shard, PsOptions options, DataPort dataPort) {
        Wire.requireLittleEndian();
        return GrpcPsServer.start(protocol, shard, options, dataPort);
    }

    /** A control connection for {@code protocol} (named in Hello), and the data port that Hello told of. */
    public static ControlConnection connectControl(String protocol, String endpoint, PsOptions options) {
        Wire.requireLittleEndian();
        GrpcPsConnection c = GrpcPsConnection.open(protocol, endpoint, options);
        return new ControlConnection(c, c.dataEndpoint(), c.denseNumel());
    }

    /**
     * A control connection, the data endpoint its server's Hello named (empty: none), and the size of each dense
     * block the server holds, by {@link #blockKey}.
     */
    public record ControlConnection(PsConnection calls, String dataEndpoint, Map<String, Long> denseNumel) {
        public static String blockKey(String param, int block) {
            return param + "/" + block;
        }
    }
}
