package org.fleet4j.pserver.grpc;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.Sessions;

/**
 * A {@link TableShard} served over gRPC: one Netty event loop group for the sockets, on whose threads the calls are
 * answered (a connection's requests on its loop's thread, in the order they arrived, with no hand-off), a pool of call
 * threads for save and load, which take long (barriers wait without a thread), the job-token check in front of every
 * call when the options carry a token, and the calls counted for Stats.
 */
final class GrpcPsServer implements PsServer {
    private static final System.Logger LOG = System.getLogger(GrpcPsServer.class.getName());
    /** How long close waits for each group of threads to end. */
    private static final Duration CLOSE_PATIENCE = Duration.ofSeconds(5);

    private final NetworkThreads threads = new NetworkThreads();
    private final Server server;
    private final String endpoint;
    private final EventLoopGroup loops;
    private final ExecutorService calls;
    private final ScheduledExecutorService timer;
    private final Barriers barriers;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Thread waitsAtExit = new Thread(this::reportWaits, "ps-barrier-waits-at-exit");

    private GrpcPsServer(String protocol, TableShard shard, PsOptions options, DataPort dataPort) throws IOException {
        DroppedConnectionLog.install();
        InetSocketAddress unresolved = TcpStore.parseHostPort(options.endpoint(), "parameter-server endpoint");
        InetSocketAddress bind = new InetSocketAddress(unresolved.getHostString(), unresolved.getPort());
        int cores = Runtime.getRuntime().availableProcessors();
        loops = threads.eventLoops(Math.min(4, cores), "ps-grpc-server-io");
        calls = Executors.newFixedThreadPool(Math.max(2, cores), threads.named("ps-grpc-server-call"));
        timer = Executors.newSingleThreadScheduledExecutor(threads.named("ps-grpc-server-timer"));
        barriers = new Barriers(this::endpoint, timer);
        Sessions sessions = options.token() == null ? null : new Sessions(options.token());
        CallCounts counts = new CallCounts();
        ParameterServerService service = new ParameterServerService(protocol, shard, counts, dataPort, sessions,
                barriers, this::endpoint, this::stopServing, calls);
        NettyServerBuilder builder = NettyServerBuilder.forAddress(bind)
                .channelType(NioServerSocketChannel.class)
                .bossEventLoopGroup(loops)
                .workerEventLoopGroup(loops)
                .withChildOption(ChannelOption.ALLOCATOR, GrpcTransport.BUFFERS)
                .maxInboundMessageSize(GrpcTransport.MAX_MESSAGE_BYTES)
                .handshakeTimeout(options.deadline().toMillis(), TimeUnit.MILLISECONDS)
                .maxConnectionIdle(GrpcTransport.IDLE_CONNECTION.toMillis(), TimeUnit.MILLISECONDS);
        // a call is answered on its connection's event loop: no hand-off to another thread and back for the reply
        // (each one cost a selector wake-up), and a connection's calls run in the order they came (star_server_lite's
        // pull before the push sent right behind it); save and load go to the call threads
        builder.directExecutor();
        // the token check runs first (the last interceptor given), so only calls let through are counted
        builder.addService(sessions == null ? ServerInterceptors.intercept(service, counts)
                : ServerInterceptors.intercept(service, counts, new JobTokenCheck(sessions, this::endpoint)));
        try {
            server = builder.build().start();
        } catch (IOException | RuntimeException e) {
            threads.shutdown(CLOSE_PATIENCE, loops, calls, timer);
            throw e;
        }
        endpoint = unresolved.getHostString() + ":" + server.getPort();
        Runtime.getRuntime().addShutdownHook(waitsAtExit);
    }

    /**
     * When the process is stopped (SIGTERM from a launcher ending the job) while workers wait in a barrier, says whom
     * they waited for: after a worker died, that names it. Written to stderr, as logging may already be shut down.
     */
    private void reportWaits() {
        for (String wait : barriers.waits()) {
            System.err.println("parameter server " + endpoint + ": stopped while " + wait);
        }
        System.err.flush();
    }

    /**
     * Serves {@code shard} for protocol {@code protocol} (grpc, or the control calls of grpc++ and the star_server
     * protocols, whose {@code dataPort} carries their pulls and pushes; null: none).
     */
    static GrpcPsServer start(String protocol, TableShard shard, PsOptions options, DataPort dataPort) {
        try {
            return new GrpcPsServer(protocol, shard, options, dataPort);
        } catch (IOException e) {
            // a port taken is bad configuration (exit code 2), not a failed peer
            throw new IllegalArgumentException("parameter server " + shard.server() + " cannot listen on "
                    + options.endpoint() + ": " + e.getMessage() + " (is the port taken? give another one, or port 0 for"
                    + " a free one)", e);
        }
    }

    @Override
    public String endpoint() {
        return endpoint;
    }

    /** A worker's stop: no new calls, the ones under way finish, waiting barriers fail. */
    private void stopServing() {
        LOG.log(System.Logger.Level.INFO, "parameter server " + endpoint + ": a worker asked it to stop");
        barriers.close();
        server.shutdown();
        stopped.countDown();
    }

    @Override
    public boolean awaitStop(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        return stopped.await(timeout.toNanos(), TimeUnit.NANOSECONDS)
                && server.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(waitsAtExit);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs or ran: it reports what the barriers below still hold
        }
        barriers.close();
        server.shutdownNow();
        boolean ended;
        try {
            ended = server.awaitTermination(CLOSE_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ended = false;
        }
        ended &= threads.shutdown(CLOSE_PATIENCE, loops, calls, timer);
        stopped.countDown();
        if (!ended) {
            LOG.log(System.Logger.Level.WARNING, "parameter server " + endpoint + ": some threads did not end within "
                    + CLOSE_PATIENCE.toSeconds() + " s of close");
        }
    }
}
