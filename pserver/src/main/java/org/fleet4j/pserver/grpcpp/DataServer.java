package org.fleet4j.pserver.grpcpp;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.fleet4j.collective.JobToken;
import org.fleet4j.collective.RateLimitedLog;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.CallProof;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.Sessions;

/**
 * grpc++'s data port on a server: pulls and pushes over {@link Frames}, answered by {@link ServerCalls} on the
 * network thread that owns what they touch. The job token is checked on the header of every request, before its
 * body is read.
 */
final class DataServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DataServer.class.getName());

    private final RateLimitedLog drops = new RateLimitedLog(LOG, 5, 10, TimeUnit.SECONDS);
    private final TableShard shard;
    private final Sessions sessions;
    private final NetworkLoops loops;
    private final Channel listener;
    private final String endpoint;
    private final Supplier<String> controlEndpoint;
    private final CopyCount copies = new CopyCount();

    /** Listens on {@code host:port} (0: a free port); {@code token} null checks none. */
    DataServer(TableShard shard, JobToken token, NetworkSettings settings, String host, int port, Duration deadline,
               Supplier<String> controlEndpoint) {
        this.shard = shard;
        this.sessions = token == null ? null : new Sessions(token);
        this.controlEndpoint = controlEndpoint;
        loops = new NetworkLoops(settings, "ps-grpcpp-server-io", 0);
        ServerBootstrap bootstrap = new ServerBootstrap().group(loops.group())
                .channel(NetworkLoops.serverChannel())
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ServerCalls calls = new ServerCalls(DataServer.this);
                        ch.pipeline().addLast(new IdleStateHandler(deadline.toMillis(), 0, 0, TimeUnit.MILLISECONDS),
                                new FrameAssembler(Frames.REQUEST_HEADER, calls), calls);
                    }
                });
        try {
            listener = bootstrap.bind(new InetSocketAddress(host, port)).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            loops.close();
            throw new PsException("parameter server " + controlEndpoint.get() + " cannot listen for grpc++ data on "
                    + host + ":" + port + ": " + e.getMessage() + " (is the port taken? fix .endpoint_map, or give"
                    + " port 0 for a free one)", e);
        }
        endpoint = host + ":" + ((InetSocketAddress) listener.localAddress()).getPort();
    }

    String endpoint() {
        return endpoint;
    }

    TableShard shard() {
        return shard;
    }

    int threads() {
        return loops.size();
    }

    EventLoop loop(int thread) {
        return loops.loop(thread);
    }

    CopyCount copies() {
        return copies;
    }

    Map<Integer, Integer> pinnedThreads() {
        return loops.pinnedThreads();
    }

    /** A new session (null when the server checks no token). */
    byte[] openSession() {
        return sessions == null ? null : sessions.open();
    }

    byte[] serverProof(byte[] nonce, byte[] session) {
        return sessions.serverProof(nonce, session);
    }

    /** Null when the proof in {@code header} at {@code at} is good for {@code call}; else what is wrong. */
    String checkProof(ByteBuf header, int at, Frames.Call call) {
        if (sessions == null) {
            return null;
        }
        byte[] proof = new byte[CallProof.HEADER_BYTES];
        header.getBytes(at, proof);
        return sessions.check(proof, call.method);
    }

    void logDrop(Channel channel, String why) {
        drops.warn("parameter server " + controlEndpoint.get() + ": grpc++ data port " + endpoint
                + " dropped a connection from " + channel.remoteAddress() + ": " + why);
    }

    void logFailure(Exception e) {
        LOG.log(System.Logger.Level.ERROR, "parameter server " + controlEndpoint.get() + ": a grpc++ call failed", e);
    }

    @Override
    public void close() {
        listener.close().syncUninterruptibly();
        if (!loops.shutdown(Duration.ofSeconds(5))) {
            LOG.log(System.Logger.Level.WARNING, "parameter server " + controlEndpoint.get() + ": some grpc++ threads"
                    + " did not end within 5 s of close");
        }
    }
}
