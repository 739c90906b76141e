package org.fleet4j.pserver.grpcpp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.transport.CallProof;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.text.Quoted;

/**
 * A worker's connection to one network thread of a grpc++ server. Requests go out in order and the server answers
 * them in order on that thread, so replies are matched to the requests waiting for them first in, first out. A
 * closed connection fails every request waiting on it. Two kinds: {@link LoopDataChannel}, served by a network
 * thread of the worker (a Netty event loop), and {@link CallerDataChannel}, whose calling threads write their
 * requests and read the replies themselves ({@code NETWORK_WORKER_CORE_NUMBER=0}).
 */
abstract class DataChannel {
    /** What Hello told the worker. */
    record Hello(int threads, int syncWorkers, byte[] session, byte[] serverProof, Map<String, Integer> sparseDims,
                 int home) {
    }

    /** A reply's future, which knows its connection: a wait for it is named after that one, and may read it. */
    static final class Reply extends CompletableFuture<ByteBuf> {
        private final DataChannel channel;

        Reply(DataChannel channel) {
            this.channel = channel;
        }

        DataChannel channel() {
            return channel;
        }
    }

    /** A request sent and not yet answered: its sequence number and its reply's future. */
    record Pending(long sequence, CompletableFuture<ByteBuf> reply) {
    }

    final String where;
    final CopyCount copies;
    /** Bytes of frames sent and received, the connection's share of {@code PsConnection.wireBytes}. */
    final LongAdder wireBytes;
    private final AtomicLong sequence = new AtomicLong();
    private JobToken token;
    private byte[] session;
    /** Why the connection no longer serves, or null while it does. */
    volatile String closedBecause;

    DataChannel(String where, CopyCount copies, LongAdder wireBytes) {
        this.where = where;
        this.copies = copies;
        this.wireBytes = wireBytes;
    }

    /**
     * Connects to the server at {@code address}, retrying until {@code deadline} while nobody listens yet; its frames'
     * bytes are added to {@code wireBytes}. With {@code loops} its I/O runs on one of their threads, without (null) on
     * the threads that call it, reading replies by busy polling when {@code busyPoll}.
     */
    static DataChannel open(String where, NetworkLoops loops, boolean busyPoll, InetSocketAddress address,
                            Duration deadline, JobToken token, CopyCount copies, LongAdder wireBytes) {
        long end = System.nanoTime() + deadline.toNanos();
        while (true) {
            try {
                DataChannel c = loops != null
                        ? new LoopDataChannel(where, loops.group(), address, deadline, copies, wireBytes)
                        : new CallerDataChannel(where, address, deadline, busyPoll, copies, wireBytes);
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
    final Hello hello(int thread, byte[] nonce, Duration deadline) {
        ByteBuf frame = PooledByteBufAllocator.DEFAULT.directBuffer();
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
    final void useSession(byte[] session) {
        this.session = session;
    }

    /** A request's length and header, signed for {@code call}, for a body of {@code bodyBytes}. */
    final ByteBuf header(Frames.Call call, long bodyBytes, int extraBytes) {
        byte[] proof = token == null || session == null ? new byte[CallProof.HEADER_BYTES]
                : CallProof.header(token, session, sequence.getAndIncrement(), call.method);
        ByteBuf header = PooledByteBufAllocator.DEFAULT.directBuffer(
                Frames.LENGTH_BYTES + Frames.REQUEST_HEADER + extraBytes);
        Frames.writeRequestHeader(header, call, bodyBytes, proof);
        return header;
    }

    final ByteBuf alloc(int bytes) {
        return PooledByteBufAllocator.DEFAULT.directBuffer(bytes, bytes);
    }

    /** The first {@code bytes} of {@code segment} as a buffer over the same memory; copied only from the heap. */
    final ByteBuf wrap(MemorySegment segment, long bytes) {
        MemorySegment part = segment.asSlice(0, bytes);
        if (part.isNative()) {
            return Unpooled.wrappedBuffer(part.asByteBuffer());
        }
        copies.heap(bytes);
        ByteBuf copy = alloc((int) bytes);
        MemorySegment.copy(part, 0, MemorySegment.ofBuffer(copy.nioBuffer(0, (int) bytes)), 0, bytes);
        return copy.writerIndex((int) bytes);
    }

    /** The sequence number a request frame (length prefix first) was signed with. */
    static long sequenceOf(ByteBuf frame) {
        return frame.getLong(Frames.LENGTH_BYTES + 8 + CallProof.SESSION_BYTES);
    }

    /**
     * Sends {@code frame} (released once written); the reply's body, retained for the caller, who reads it on its
     * own thread and releases it.
     */
    final CompletableFuture<ByteBuf> send(ByteBuf frame) {
        return send(frame, null);
    }

    /**
     * As {@link #send(ByteBuf)}; {@code written} (when not null) completes once the frame has been handed to the
     * socket, after which the memory it wraps may be written over, or fails as the write did.
     */
    abstract CompletableFuture<ByteBuf> send(ByteBuf frame, CompletableFuture<Void> written);

    static void fail(CompletableFuture<ByteBuf> done, CompletableFuture<Void> written, String why) {
        done.completeExceptionally(new PsException(why));
        if (written != null) {
            written.completeExceptionally(new PsException(why));
        }
    }

    /** Waits until {@code written} (from {@link #send(ByteBuf, CompletableFuture)}) is done, at most {@code deadline}. */
    final void awaitWritten(CompletableFuture<Void> written, String what, Duration deadline) {
        await(written, what, System.nanoTime() + deadline.toNanos(), "not written to the socket within "
                + deadline.toMillis() + " ms; is the server alive and reading?");
    }

    /** Waits for {@code f} until {@code end}; a timeout says {@code late}, a failure names {@code what}. */
    final void await(CompletableFuture<?> f, String what, long end, String late) {
        try {
            if (f instanceof Reply r) {
                r.channel().readUntil(r, end);
            }
            f.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new PsException(what + " on " + where + ": " + late, e);
        } catch (ExecutionException e) {
            throw new PsException(what + " on " + where + " failed: " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PsException(what + " on " + where + ": interrupted", e);
        }
    }

    /**
     * Where the calling thread does the connection's reads: reads until {@code reply} is complete or {@code end}
     * (System.nanoTime) has passed. Otherwise nothing: another thread completes it.
     */
    void readUntil(Reply reply, long end) throws TimeoutException, InterruptedException {
    }

    /** Requests sent and not yet answered. */
    abstract int inFlight();

    /**
     * Every reply's body within {@code deadline}, to be released; if one fails, the others are released, and the
     * failure names {@code what} and the server. A reply of another connection is awaited there, and named after it.
     */
    final List<ByteBuf> awaitAll(List<CompletableFuture<ByteBuf>> replies, String what, Duration deadline) {
        long end = System.nanoTime() + deadline.toNanos();
        String late = "no answer within " + deadline.toMillis() + " ms; is the server alive and reachable?";
        try {
            for (CompletableFuture<ByteBuf> r : replies) {
                DataChannel on = r instanceof Reply c ? c.channel() : this;
                on.await(r, what, end, late);
            }
        } catch (PsException e) {
            replies.forEach(r -> r.thenAccept(ByteBuf::release));
            throw e;
        }
        List<ByteBuf> bodies = new ArrayList<>(replies.size());
        replies.forEach(r -> bodies.add(r.join()));
        return bodies;
    }

    /**
     * The body's length of a reply whose {@code header} (length prefix included) is complete; throws for one that
     * breaks the protocol.
     */
    static long replyBodyBytes(ByteBuf header) throws FrameException {
        long length = Integer.toUnsignedLong(header.getInt(0));
        if (header.getInt(4) != Frames.MAGIC || header.getByte(8) != Frames.VERSION) {
            throw new FrameException("the server does not speak grpc++ version " + Frames.VERSION);
        }
        if (length > Frames.MAX_FRAME || length < Frames.REPLY_HEADER) {
            throw new FrameException("a reply claims " + length + " bytes, outside [" + Frames.REPLY_HEADER + ", "
                    + Frames.MAX_FRAME + "]");
        }
        return length - Frames.REPLY_HEADER;
    }

    /**
     * Hands a whole reply ({@code header} and {@code body}, which the caller releases) to {@code p}, the request
     * waiting first; false when none was waiting or its sequence number differs (the connection is then broken).
     */
    final boolean answer(Pending p, ByteBuf header, ByteBuf body) {
        wireBytes.add(header.readableBytes() + body.readableBytes());
        if (!body.isDirect()) {
            copies.heap(body.readableBytes());
        }
        short status = header.getShort(10);
        long replySequence = header.getLong(12);
        if (p == null || p.sequence() != replySequence) {
            String why = "the server sent a reply nobody asked for (sequence " + replySequence + ")";
            if (p != null) {
                p.reply().completeExceptionally(new PsException(why));
            }
            closeBecause(why);
            return false;
        }
        if (status != Frames.OK) {
            String message = Quoted.message(body.toString(StandardCharsets.UTF_8)); // the peer's text, bounded
            p.reply().completeExceptionally(new PsException(status == Frames.REFUSED ? "refused: " + message
                    : message));
            return true;
        }
        p.reply().complete(body.retain());
        return true;
    }

    /** The connection no longer serves, for {@code why}: every request waiting fails with it. */
    abstract void closeBecause(String why);

    abstract void close();
}
