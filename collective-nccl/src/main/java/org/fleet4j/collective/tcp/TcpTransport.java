package org.fleet4j.collective.tcp;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.GroupContext;
import org.fleet4j.collective.OpCall;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A full mesh of authenticated TCP connections among a group's ranks, over Netty. Rank i dials every rank below
 * it and says hello with the job token, the group name and its rank; the listener checks all three before the
 * connection carries data, and closes anything else with a log line. Each peer's data frames arrive in order in
 * that peer's inbox, from which the group's algorithms take them with a deadline.
 */
final class TcpTransport implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(TcpTransport.class.getName());
    private static final byte HELLO = 1;
    private static final byte DATA = 2;
    private static final byte BYE = 3;
    private static final byte ABORT = 4;
    /** type + seq + fingerprint (2 words). */
    static final int DATA_HEADER = 1 + 8 + 8 + 8;
    private static final long HELLO_TIMEOUT_MS = 10_000;

    /** Inbox entry saying the peer's connection ended; {@code clean} when it said goodbye first. */
    private record Closed(int peer, boolean clean, String why) {
    }

    private final GroupContext ctx;
    private final int maxFrame;
    private final Channel server;
    private final Channel[] peers;
    private final BlockingQueue<Object>[] inboxes;
    private volatile CollectiveException aborted;
    private volatile boolean closing;

    @SuppressWarnings("unchecked")
    TcpTransport(GroupContext ctx) {
        this.ctx = ctx;
        int n = ctx.size();
        this.maxFrame = ctx.options().tcpChunkBytes() + DATA_HEADER + 1024;
        this.peers = new Channel[n];
        this.inboxes = new BlockingQueue[n];
        for (int i = 0; i < n; i++) {
            inboxes[i] = new LinkedBlockingQueue<>();
        }
        Duration timeout = ctx.options().timeout();
        ServerBootstrap sb = new ServerBootstrap().group(NettyLoops.group()).channel(NettyLoops.serverChannel())
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, NettyLoops.ALLOCATOR)
                .childOption(ChannelOption.RCVBUF_ALLOCATOR, NettyLoops.READS)
                .childOption(ChannelOption.SO_RCVBUF, NettyLoops.SOCKET_BUFFER_BYTES)
                .childOption(ChannelOption.SO_SNDBUF, NettyLoops.SOCKET_BUFFER_BYTES)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(decoder(), new HelloCheck());
                    }
                });
        try {
            server = sb.bind(new InetSocketAddress(ctx.bindHost(), 0)).sync().channel();
        } catch (Exception e) {
            throw new CollectiveException("cannot listen on " + ctx.bindHost() + " for " + ctx + ": " + e, e);
        }
        int port = ((InetSocketAddress) server.localAddress()).getPort();
        try {
            ctx.store().setString(ctx.key("tcp/" + ctx.rank()), ctx.bindHost() + ":" + port);
            for (int j = 0; j < ctx.rank(); j++) {
                dial(j, ctx.store().getString(ctx.key("tcp/" + j), timeout));
            }
            awaitPeers(System.nanoTime() + timeout.toNanos());
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private LengthFieldBasedFrameDecoder decoder() {
        return new LengthFieldBasedFrameDecoder(maxFrame, 0, 4, 0, 4);
    }

    private void dial(int peer, String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        String host = endpoint.substring(0, colon);
        int port = Integer.parseInt(endpoint.substring(colon + 1));
        Bootstrap b = new Bootstrap().group(NettyLoops.group()).channel(NettyLoops.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, NettyLoops.ALLOCATOR)
                .option(ChannelOption.RCVBUF_ALLOCATOR, NettyLoops.READS)
                .option(ChannelOption.SO_RCVBUF, NettyLoops.SOCKET_BUFFER_BYTES)
                .option(ChannelOption.SO_SNDBUF, NettyLoops.SOCKET_BUFFER_BYTES)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, ctx.options().timeout().toMillis()))
                .handler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(decoder(), new Inbound(peer));
                    }
                });
        ChannelFuture f = b.connect(host, port).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw new CollectiveException(ctx + ": cannot connect to rank " + peer + " at " + endpoint + ": " + f.cause(), f.cause());
        }
        Channel ch = f.channel();
        byte[] name = ctx.name().getBytes(StandardCharsets.UTF_8);
        ByteBuf hello = ch.alloc().buffer();
        hello.writeInt(1 + 4 + ctx.jobToken().length + 4 + name.length + 4);
        hello.writeByte(HELLO).writeInt(ctx.jobToken().length).writeBytes(ctx.jobToken())
                .writeInt(name.length).writeBytes(name).writeInt(ctx.rank());
        ch.writeAndFlush(hello);
        register(peer, ch);
    }

    private synchronized void register(int peer, Channel ch) {
        peers[peer] = ch;
        notifyAll();
    }

    private synchronized void awaitPeers(long deadline) {
        while (true) {
            List<Integer> missing = new ArrayList<>();
            for (int j = 0; j < peers.length; j++) {
                if (j != ctx.rank() && peers[j] == null) {
                    missing.add(j);
                }
            }
            long left = deadline - System.nanoTime();
            if (missing.isEmpty()) {
                return;
            }
            if (left <= 0) {
                throw new CollectiveException(ctx + ": ranks " + missing + " did not connect within "
                        + ctx.options().timeout().toMillis() + " ms");
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CollectiveException(ctx + ": interrupted while waiting for ranks " + missing + " to connect", e);
            }
        }
    }

    /** Sends {@code bytes} of {@code src} at {@code offset} to {@code peer} as one data frame of {@code call}. */
    void send(int peer, OpCall call, MemorySegment src, long offset, int bytes) {
        checkAborted();
        Channel ch = peers[peer];
        ByteBuf buf = ch.alloc().directBuffer(4 + DATA_HEADER + bytes);
        buf.writeInt(DATA_HEADER + bytes).writeByte(DATA).writeLong(call.seq())
                .writeLong(call.fingerprintHigh()).writeLong(call.fingerprintLow());
        if (bytes > 0) {
            MemorySegment.ofBuffer(buf.nioBuffer(buf.writerIndex(), bytes)).copyFrom(src.asSlice(offset, bytes));
            buf.writerIndex(buf.writerIndex() + bytes);
        }
        ch.writeAndFlush(buf);
    }

    /**
     * The next data frame from {@code peer}, positioned at its payload, which must be {@code bytes} long. The caller
     * releases it. Fails naming the peer on timeout, disconnect, or a frame of a different call.
     */
    ByteBuf receive(int peer, OpCall call, int bytes, long deadline) {
        Object item;
        try {
            item = inboxes[peer].poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException(call + " on " + ctx + ": interrupted while waiting for rank " + peer, e);
        }
        if (item == null) {
            checkAborted();
            throw new CollectiveException(call + " on " + ctx + " timed out after " + ctx.options().timeout().toMillis()
                    + " ms waiting for data from rank " + peer + ": ranks [" + peer + "] did not take part");
        }
        if (item instanceof Closed c) {
            inboxes[peer].offer(c);
            checkAborted();
            throw new CollectiveException(call + " on " + ctx + " failed: rank " + c.peer() + " " + c.why()
                    + "; ranks [" + c.peer() + "] did not take part");
        }
        ByteBuf frame = (ByteBuf) item;
        long seq = frame.readLong();
        long high = frame.readLong();
        long low = frame.readLong();
        if (ctx.options().verifyCalls() && (seq != call.seq() || !call.matches(high, low))) {
            frame.release();
            throw new CollectiveException("mismatched calls on " + ctx + ": this rank issued " + call + " but rank " + peer
                    + " issued " + OpCall.describe(high, low, seq) + "; every rank must issue the same calls in the same order");
        }
        if (frame.readableBytes() != bytes) {
            int got = frame.readableBytes();
            frame.release();
            throw new CollectiveException(call + " on " + ctx + ": rank " + peer + " sent a chunk of " + got
                    + " bytes where " + bytes + " were expected (do all ranks use the same tcpChunkBytes?)");
        }
        return frame;
    }

    /** Fails every waiter on this transport and drops the connections, so that peers fail fast too. */
    void abort(CollectiveException reason) {
        aborted = reason;
        byte[] msg = String.valueOf(reason.getMessage()).getBytes(StandardCharsets.UTF_8);
        for (int j = 0; j < peers.length; j++) {
            inboxes[j].offer(new Closed(j, false, "was disconnected after a failure"));
            Channel ch = peers[j];
            if (ch != null && ch.isActive()) {
                ByteBuf frame = ch.alloc().buffer(5 + msg.length).writeInt(1 + msg.length).writeByte(ABORT).writeBytes(msg);
                ch.writeAndFlush(frame).addListener(f -> ch.close());
            }
        }
    }

    private void checkAborted() {
        CollectiveException a = aborted;
        if (a != null) {
            throw new CollectiveException(ctx + " was aborted: " + a.getMessage(), a);
        }
    }

    @Override
    public void close() {
        closing = true;
        for (Channel ch : peers) {
            if (ch != null && ch.isActive()) {
                ByteBuf bye = ch.alloc().buffer(5).writeInt(1).writeByte(BYE);
                ch.writeAndFlush(bye).addListener(f -> ch.close());
            }
        }
        server.close();
    }

    private void peerLost(int peer, String why) {
        Closed c = new Closed(peer, false, why);
        for (BlockingQueue<Object> inbox : inboxes) {
            inbox.offer(c);
        }
    }

    /** Moves a known peer's frames into its inbox and turns the end of its connection into an inbox entry. */
    private final class Inbound extends ChannelInboundHandlerAdapter {
        private final int peer;
        private boolean saidBye;

        Inbound(int peer) {
            this.peer = peer;
        }

        @Override
        public void channelRead(ChannelHandlerContext c, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            byte type = frame.readByte();
            if (type == DATA) {
                inboxes[peer].offer(frame);
                return;
            }
            if (type == ABORT) {
                String reason = frame.toString(StandardCharsets.UTF_8);
                frame.release();
                saidBye = true;
                Closed lost = new Closed(peer, false, "aborted the group after: " + reason);
                for (BlockingQueue<Object> inbox : inboxes) {
                    inbox.offer(lost);
                }
                return;
            }
            frame.release();
            if (type == BYE) {
                saidBye = true;
            } else {
                LOG.log(System.Logger.Level.WARNING, ctx + ": closing connection of rank " + peer + ": unexpected frame type " + type);
                c.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext c) {
            if (saidBye || closing) {
                inboxes[peer].offer(new Closed(peer, true, "closed the group"));
            } else {
                peerLost(peer, "dropped its connection (process died or was killed?)");
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
            LOG.log(System.Logger.Level.WARNING, ctx + ": connection of rank " + peer + " failed: " + cause);
            c.close();
        }
    }

    /** The listener's first handler: accepts a connection only after a hello with the job token for this group. */
    private final class HelloCheck extends ChannelInboundHandlerAdapter {
        private ScheduledFuture<?> timer;

        @Override
        public void channelActive(ChannelHandlerContext c) {
            timer = c.executor().schedule(() -> reject(c, "no hello within " + HELLO_TIMEOUT_MS + " ms"),
                    HELLO_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            c.fireChannelActive();
        }

        @Override
        public void channelRead(ChannelHandlerContext c, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            try {
                String problem = check(frame);
                if (problem != null) {
                    reject(c, problem);
                    return;
                }
                int rank = frame.readInt();
                timer.cancel(false);
                c.pipeline().replace(this, "inbound", new Inbound(rank));
                register(rank, c.channel());
            } finally {
                frame.release();
            }
        }

        private String check(ByteBuf f) {
            if (f.readableBytes() < 1 + 4 || f.readByte() != HELLO) {
                return "first frame is not a hello";
            }
            int tokenLen = f.readInt();
            if (tokenLen < 0 || tokenLen > f.readableBytes()) {
                return "malformed hello";
            }
            byte[] token = new byte[tokenLen];
            f.readBytes(token);
            if (!MessageDigest.isEqual(token, ctx.jobToken())) {
                return "wrong job token (not a member of job '" + ctx.jobId() + "')";
            }
            if (f.readableBytes() < 4) {
                return "malformed hello";
            }
            int nameLen = f.readInt();
            if (nameLen < 0 || nameLen + 4 != f.readableBytes()) {
                return "malformed hello";
            }
            byte[] name = new byte[nameLen];
            f.readBytes(name);
            String group = new String(name, StandardCharsets.UTF_8);
            if (!group.equals(ctx.name())) {
                return "hello for group '" + group + "' on the port of group '" + ctx.name() + "'";
            }
            int rank = f.getInt(f.readerIndex());
            if (rank <= ctx.rank() || rank >= ctx.size()) {
                return "hello from rank " + rank + ", expected one of " + (ctx.rank() + 1) + ".." + (ctx.size() - 1);
            }
            synchronized (TcpTransport.this) {
                if (peers[rank] != null) {
                    return "second hello from rank " + rank;
                }
            }
            return null;
        }

        private void reject(ChannelHandlerContext c, String why) {
            LOG.log(System.Logger.Level.WARNING, ctx + ": closed connection from " + c.channel().remoteAddress() + ": " + why);
            c.close();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
            reject(c, cause.toString());
        }
    }
}
