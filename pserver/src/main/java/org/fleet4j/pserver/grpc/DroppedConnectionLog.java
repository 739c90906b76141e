package org.fleet4j.pserver.grpc;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.fleet4j.cluster.RateLimitedLog;

/**
 * grpc-java logs every connection it drops for not speaking HTTP/2 (garbage, a port scan) with a stack trace; a
 * stranger can provoke that at will. This turns those records into one rate-limited line naming the cause. It is set
 * on grpc's (shaded, so ours alone) transport logger once per JVM.
 */
final class DroppedConnectionLog {
    private static final String GRPC_LOGGER = NettyServerBuilder.class.getPackageName()
            + ".NettyServerTransport.connections";
    /** Held so that the configured logger is not collected and its filter lost. */
    private static final Logger TRANSPORT = Logger.getLogger(GRPC_LOGGER);
    private static final RateLimitedLog DROPS = new RateLimitedLog(System.getLogger(GrpcPsServer.class.getName()),
            5, 10, TimeUnit.SECONDS);

    static {
        TRANSPORT.setFilter(r -> {
            if (r.getThrown() == null || r.getLevel().intValue() > Level.INFO.intValue()) {
                return true;
            }
            String cause = String.valueOf(r.getThrown().getMessage());
            DROPS.warn("parameter server: dropped a connection that does not speak gRPC: "
                    + (cause.length() > 120 ? cause.substring(0, 120) + "..." : cause));
            return false;
        });
    }

    private DroppedConnectionLog() {
    }

    /** Installs the filter (the first call does; later ones find it in place). */
    static void install() {
        TRANSPORT.getFilter();
    }
}
