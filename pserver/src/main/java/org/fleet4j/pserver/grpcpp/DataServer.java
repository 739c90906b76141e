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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.RateLimitedLog;
import org.fleet4j.pserver.grpc.DataPort;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.CallProof;
import org.fleet4j.pserver.transport.Sessions;

/**
 * grpc++'s data port on a server: pulls and pushes over {@link Frames}, answered by {@link ServerCalls} on the network
 * thread that owns what they touch: the network threads are the table shard's owners ({@link #ownTables}). The job
 * token is checked on the header of every request, before its body is read.
 */
final class DataServer implements DataPort, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DataServer.class.getName());

    private final RateLimitedLog drops = new RateLimitedLog(LOG, 5, 10, TimeUnit.SECONDS);
    private final TableShard shard;
    private final Sessions sessions;
    private final NetworkLoops loops;
    private final Channel listener;
    private final String endpoint;
    private final Supplier<String> controlEndpoint;
    private final CopyCount copies = new CopyCount();
    /** Calls answered, by {@link Frames.Call} ordinal, for Stats. */
    private final LongAdder[] calls = new LongAdder[Frames.Call.values().length];
    /** Workers' connections so far: the next one's home thread for a step's one frame is this modulo the threads. */
    private final AtomicInteger connections = new AtomicInteger();

    /**
     * Listens on {@code host:port} (0: a free port) with {@code loops}, which own {@code shard}'s parts (see
     * {@link #ownTables}) and are closed with this; {@code token} null checks none.
     */
    DataServer(TableShard shard, NetworkLoops loops, JobToken token, String host, int port, Duration deadline,
               Supplier<String> controlEndpoint) {
        this.shard = shard;
        this.loops = loops;
        this.sessions = token == null ? null : new Sessions(token);
        this.controlEndpoint = controlEndpoint;
        Arrays.setAll(calls, i -> new LongAdder());
        ServerBootstrap bootstrap = new ServerBootstrap().group(loops.group())
                .channel(NetworkLoops.serverChannel())
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ServerCalls calls = new ServerCalls(DataServer.this);
                        FrameAssembler frames = new FrameAssembler(Frames.REQUEST_HEADER, calls, copies);
                        InPlaceReads.install(ch, frames);
                        ch.pipeline().addLast(new IdleStateHandler(deadline.toMillis(), 0, 0, TimeUnit.MILLISECONDS),
                                frames, calls);
                    }
                });
        try {
            listener = bootstrap.bind(new InetSocketAddress(host, port)).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            stopLoops();
            // a port taken is bad configuration (exit code 2), not a failed peer
            throw new IllegalArgumentException("parameter server " + controlEndpoint.get() + " cannot listen for grpc++"
                    + " data on " + host + ":" + port + ": " + e.getMessage() + " (is the port taken by another process?"
                    + " give the server a free data port in .endpoint_map)", e);
        }
        endpoint = host + ":" + ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /**
     * Makes the network threads the shard's owners: loop {@code i} owns what {@link TableShard#ownerOfSparse} and
     * {@link TableShard#ownerOfDense} call owner {@code i}, and the work of a request it received runs on it in
     * place. Before serving.
     */
    static NetworkLoops ownTables(TableShard shard, NetworkSettings settings) {
        NetworkLoops loops = new NetworkLoops(settings, "ps-grpcpp-server-io", 0);
        List<EventLoop> owners = new ArrayList<>();
        for (int i = 0; i < loops.size(); i++) {
            owners.add(loops.loop(i));
        }
        try {
            shard.runOn(owners);
        } catch (RuntimeException e) {
            loops.close();
            throw e;
        }
        return loops;
    }

    @Override
    public String endpoint() {
        return endpoint;
    }

    void count(Frames.Call call) {
        calls[call.ordinal()].increment();
    }

    /** The data port's calls by the grpc method of the same meaning; Hello, a connection's start, is not counted. */
    @Override
    public Map<String, Long> calls() {
        Map<String, Long> out = new TreeMap<>();
        for (Frames.Call c : Frames.Call.values()) {
            long n = calls[c.ordinal()].sum();
            if (n > 0 && c != Frames.Call.HELLO) {
                out.put(c.grpcMethod, n);
            }
        }
        return out;
    }

    /**
     * The thread that a new worker connection sends its whole steps to (PULL_MANY, PUSH_MANY): the workers in turn
     * over the threads, so that receiving and answering them is spread as the tables are.
     */
    int nextHome() {
        return Math.floorMod(connections.getAndIncrement(), loops.size());
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
        stopLoops();
    }

    /** Stops the network threads and gives the shard owner threads of its own again (control calls may follow). */
    private void stopLoops() {
        if (loops.shutdown(Duration.ofSeconds(5))) {
            shard.runOnOwnThreads();
        } else {
            LOG.log(System.Logger.Level.WARNING, "parameter server " + controlEndpoint.get() + ": some grpc++ threads"
                    + " did not end within 5 s of close; its tables stay on them");
        }
    }
}
