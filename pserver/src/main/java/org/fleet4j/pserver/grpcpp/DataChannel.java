package org.fleet4j.pserver.grpcpp;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.fleet4j.collective.JobToken;
import org.fleet4j.pserver.transport.CallProof;
import org.fleet4j.pserver.transport.PsException;

/**
 * A worker's connection to one network thread of a grpc++ server. Requests go out in order and the server answers
 * them in order on that thread, so replies are matched to the requests waiting for them first in, first out; the
 * queue is touched only on this connection's event loop. A closed connection fails every request waiting on it.
 */
final class DataChannel extends ChannelInboundHandlerAdapter implements FrameAssembler.Sink {
    /** What Hello told the worker. */
    record Hello(int threads, int syncWorkers, byte[] session, byte[] serverProof, Map<String, Integer> sparseDims,
                 int home) {
    }

    private record Pending(long sequence, CompletableFuture<ByteBuf> reply) {
    }

    private final String where;
    private final Channel channel;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private final AtomicLong sequence = new AtomicLong();
    private final CopyCount copies;
    /** Bytes of frames sent and received, the connection's share of {@code PsConnection.wireBytes}. */
    private final LongAdder wireBytes;
    private JobToken token;
    private byte[] session;
    private volatile String closedBecause;
    private short status;
    private long replySequence;

    private DataChannel(String where, EventLoopGroup loop, InetSocketAddress address, Duration deadline,
                        CopyCount copies, LongAdder wireBytes) {
        this.where = where;
        this.copies = copies;
        this.wireBytes = wireBytes;
        DataChannel self = this;
        Bootstrap bootstrap = new Bootstrap().group(loop).channel(NetworkLoops.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, deadline.toMillis()))
                .handler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        FrameAssembler frames = new FrameAssembler(Frames.REPLY_HEADER, self, copies);
                        InPlaceReads.install(ch, frames);
                        ch.pipeline().addLast(frames, self);
                    }
                });
        channel = bootstrap.connect(address).syncUninterruptibly().channel();
    }

    /**
     * Connects to the server at {@code address}, retrying until {@code deadline} while
     * nobody listens yet; its frames' bytes are added to {@code wireBytes}.
     */
    static DataChannel open(String where, EventLoopGroup loop, InetSocketAddress address, Duration deadline,
                            JobToken token, CopyCount copies, LongAdder wireBytes) {
        long end = System.nanoTime() + deadline.toNanos();
        while (true) {
            try {
                DataChannel c = new DataChannel(where, loop, address, deadline, copies, wireBytes);
                c.token = token;
                return c;
            } catch (Exception e) { // Netty rethrows the connect's IOException unchecked
                if (System.nanoTime() > end) {
                    throw new PsException(where + ": nobody listens on the grpc++ data port " + address.getHostString()
                            + ":" + address.getPort() + " (" + e.getMessage() + ") within " + deadline.toMillis()
                            + " ms; is the server alive, and does .endpoint_map name its data port?", e);
                }
                try {
                    Thread.sleep(50);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new PsException(where + ": interrupted while connecting", ie);
                }
            }
        }
    }

    /** Hello for network thread {@code thread}: the server's answer, its proof not yet checked. */
    Hello hello(int thread, byte[] nonce, Duration deadline) {
        ByteBuf frame = channel.alloc().directBuffer();
        Frames.writeRequestHeader(frame, Frames.Call.HELLO, 36, new byte[CallProof.HEADER_BYTES]);
        frame.writeBytes(nonce).writeInt(thread);
        ByteBuf body = awaitAll(List.of(send(frame)), "connect", deadline).getFirst();
        try {
            int threads = body.readInt();
            int sync = body.readInt();
            body.skipBytes(2 * Integer.BYTES); // the server's shard and count of shards, for a raw client's reading
            boolean hasSession = body.readBoolean();
            byte[] s = new byte[32];
            byte[] proof = new byte[32];
            body.readBytes(s).readBytes(proof);
            Map<String, Integer> dims = new HashMap<>();
            for (int i = body.readInt(); i > 0; i--) {
                dims.put(Frames.readName(body), body.readInt());
            }
            int home = body.readInt();
            return new Hello(threads, sync, hasSession ? s : null, proof, Map.copyOf(dims), home);
        } finally {
            body.release();
        }
    }

    /** From now on every request proves the token with {@code session} (null: no token). */
    void useSession(byte[] session) {
        this.session = session;
    }

    /** A request's length and header, signed for {@code call}, for a body of {@code bodyBytes}. */
    ByteBuf header(Frames.Call call, long bodyBytes, int extraBytes) {
        byte[] proof = token == null || session == null ? new byte[CallProof.HEADER_BYTES]
                : CallProof.header(token, session, sequence.getAndIncrement(), call.method);
        ByteBuf header = channel.alloc().directBuffer(Frames.LENGTH_BYTES + Frames.REQUEST_HEADER + extraBytes);
        Frames.writeRequestHeader(header, call, bodyBytes, proof);
        return header;
    }

    ByteBuf alloc(int bytes) {
        return channel.alloc().directBuffer(bytes, bytes);
    }

    /** The first {@code bytes} of {@code segment} as a buffer over the same memory; copied only from the heap. */
    ByteBuf wrap(MemorySegment segment, long bytes) {
        MemorySegment part = segment.asSlice(0, bytes);
        if (part.isNative()) {
            return Unpooled.wrappedBuffer(part.asByteBuffer());
        }
        copies.heap(bytes);
        ByteBuf copy = alloc((int) bytes);
        MemorySegment.copy(part, 0, MemorySegment.ofBuffer(copy.nioBuffer(0, (int) bytes)), 0, bytes);
        return copy.writerIndex((int) bytes);
    }

    /**
     * Sends {@code frame} (released once written); the reply's body, retained for the caller, who reads it on its
     * own thread (its buffers may be confined to it) and releases it.
     */
    CompletableFuture<ByteBuf> send(ByteBuf frame) {
        return send(frame, null);
    }

    /**
     * As {@link #send(ByteBuf)}; {@code written} (when not null) completes once the frame has been handed to the
     * socket, after which the memory it wraps may be written over, or fails as the write did.
     */
    CompletableFuture<ByteBuf> send(ByteBuf frame, CompletableFuture<Void> written) {
        CompletableFuture<ByteBuf> done = new CompletableFuture<>();
        String closed = closedBecause;
        if (closed != null) {
            frame.release();
            fail(done, written, closed);
            return done;
        }
        long seq = frame.getLong(Frames.LENGTH_BYTES + 8 + CallProof.SESSION_BYTES);
        channel.eventLoop().execute(() -> {
            if (closedBecause != null) {
                frame.release();
                fail(done, written, closedBecause);
                return;
            }
            pending.add(new Pending(seq, done));
            wireBytes.add(frame.readableBytes());
            if (written == null) {
                channel.writeAndFlush(frame);
                return;
            }
            channel.writeAndFlush(frame).addListener(f -> {
                if (f.isSuccess()) {
                    written.complete(null);
                } else {
                    written.completeExceptionally(new PsException("the write failed: " + f.cause()));
                }
            });
        });
        return done;
    }

    private static void fail(CompletableFuture<ByteBuf> done, CompletableFuture<Void> written, String why) {
        done.completeExceptionally(new PsException(why));
        if (written != null) {
            written.completeExceptionally(new PsException(why));
        }
    }

    /** Waits until {@code written} (from {@link #send(ByteBuf, CompletableFuture)}) is done, at most {@code deadline}. */
    void awaitWritten(CompletableFuture<Void> written, String what, Duration deadline) {
        await(written, what, deadline, "not written to the socket within " + deadline.toMillis()
                + " ms; is the server alive and reading?");
    }

    /** Waits for {@code f} at most {@code deadline}; a timeout says {@code late}, a failure names {@code what}. */
    private void await(CompletableFuture<?> f, String what, Duration deadline, String late) {
        try {
            f.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new PsException(what + " on " + where + ": " + late, e);
        } catch (ExecutionException e) {
            throw new PsException(what + " on " + where + " failed: " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PsException(what + " on " + where + ": interrupted", e);
        }
    }

    /** Requests sent and not yet answered (asked on the connection's own thread, where the queue lives). */
    int inFlight() {
        return channel.eventLoop().submit(pending::size).syncUninterruptibly().getNow();
    }

    /**
     * Every reply's body within {@code deadline}, to be released; if one fails, the others are released, and the
     * failure names {@code what} and the server.
     */
    List<ByteBuf> awaitAll(List<CompletableFuture<ByteBuf>> replies, String what, Duration deadline) {
        try {
            await(CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new)), what, deadline,
                    "no answer within " + deadline.toMillis() + " ms; is the server alive and reachable?");
        } catch (PsException e) {
            releaseWhenDone(replies);
            throw e;
        }
        return replies.stream().map(CompletableFuture::join).toList();
    }

    private static void releaseWhenDone(List<CompletableFuture<ByteBuf>> replies) {
        replies.forEach(r -> r.thenAccept(ByteBuf::release));
    }

    @Override
    public long bodyBytes(ChannelHandlerContext ctx, ByteBuf header) throws FrameException {
        long length = Integer.toUnsignedLong(header.getInt(0));
        if (header.getInt(4) != Frames.MAGIC || header.getByte(8) != Frames.VERSION) {
            throw new FrameException("the server does not speak grpc++ version " + Frames.VERSION);
        }
        if (length > Frames.MAX_FRAME || length < Frames.REPLY_HEADER) {
            throw new FrameException("a reply claims " + length + " bytes, outside [" + Frames.REPLY_HEADER + ", "
                    + Frames.MAX_FRAME + "]");
        }
        status = header.getShort(10);
        replySequence = header.getLong(12);
        return length - Frames.REPLY_HEADER;
    }

    @Override
    public void frame(ChannelHandlerContext ctx, ByteBuf header, ByteBuf body) {
        wireBytes.add(header.readableBytes() + body.readableBytes());
        if (!body.isDirect()) {
            copies.heap(body.readableBytes());
        }
        Pending p = pending.poll();
        if (p == null || p.sequence() != replySequence) {
            fail("the server sent a reply nobody asked for (sequence " + replySequence + ")");
            ctx.close();
            return;
        }
        if (status != Frames.OK) {
            String message = body.toString(StandardCharsets.UTF_8);
            p.reply().completeExceptionally(new PsException(status == Frames.REFUSED ? "refused: " + message
                    : message));
            return;
        }
        p.reply().complete(body.retain());
    }

    @Override
    public void dropped(ChannelHandlerContext ctx, String why) {
        fail("the connection broke: " + why);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        fail("the server closed the connection (is it alive?)");
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail("the connection failed: " + cause.getMessage());
        ctx.close();
    }

    private void fail(String why) {
        if (closedBecause == null) {
            closedBecause = why;
        }
        for (Pending p = pending.poll(); p != null; p = pending.poll()) {
            p.reply().completeExceptionally(new PsException(why));
        }
    }

    void close() {
        channel.close().syncUninterruptibly();
    }
}
