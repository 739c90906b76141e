package org.fleet4j.pserver.grpcpp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.timeout.IdleStateEvent;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.fleet4j.pserver.table.SparseTable;
import org.fleet4j.pserver.table.TableException;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.CallProof;

/**
 * One worker connection's calls on a grpc++ server. Hello moves the connection to the network thread the worker asked
 * for; from then on every request is answered on that thread, which is the table shard's owner of everything the
 * request may touch ({@link DataServer#ownTables}): the tables run it right here, with no lock and no hand-off to
 * another thread, and a request for what another thread owns is refused. Only a sync step's last sparse push waits for
 * the other owners to apply the step; its reply, and the connection's replies after it, follow when they have. Ids and
 * gradients are read where they arrived (a view of the direct receive buffer) and rows are pulled straight into the
 * reply's direct buffer.
 *
 * <p>A PULL_MANY or PUSH_MANY frame carries a whole step for this server (every table's ids and gradients); its
 * entries go to their owners through the shard (in place for this thread's parts, queued to the other network
 * threads for theirs: no lock), and the one reply follows when all are done. The other threads' parts are handed
 * over first and this thread's own parts run last, while they run.
 */
final class ServerCalls extends ChannelInboundHandlerAdapter implements FrameAssembler.Sink {
    private static final int HELLO_BYTES = 32 + Integer.BYTES;

    private final DataServer server;
    private final TableShard shard;
    /** The thread this connection's worker asked for in Hello; -1 before Hello. */
    private int thread = -1;
    private long sequence;
    /** Done when every reply so far has been handed to the channel. */
    private CompletableFuture<Void> replied = CompletableFuture.completedFuture(null);
    private Frames.Call call;
    /**
     * Each sparse table's last pull on this connection, where it found its ids' rows: the push that follows with the
     * same ids (a step's pull, then its push) uses it once instead of finding them again. Only this connection's
     * thread touches it.
     */
    private final Map<String, SparseTable.Lookup> pulled = new HashMap<>();
    /** The buffer this connection's large replies (a fused step's rows and dense values) are written into. */
    private final KeptBuffer keptReply;

    ServerCalls(DataServer server) {
        this.server = server;
        this.shard = server.shard();
        this.keptReply = new KeptBuffer(server.copies());
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        keptReply.release();
    }

    @Override
    public long bodyBytes(ChannelHandlerContext ctx, ByteBuf header) throws FrameException {
        long length = Integer.toUnsignedLong(header.getInt(0));
        int magic = header.getInt(4);
        if (magic != Frames.MAGIC) {
            throw new FrameException("not a grpc++ frame (it starts with 0x" + Integer.toHexString(magic)
                    + ", not 0x" + Integer.toHexString(Frames.MAGIC) + ")");
        }
        if (header.getByte(8) != Frames.VERSION) {
            throw new FrameException("a frame of grpc++ version " + header.getByte(8) + "; this server speaks "
                    + Frames.VERSION);
        }
        call = Frames.Call.of(header.getByte(9));
        if (call == null) {
            throw new FrameException("a frame of unknown call " + header.getByte(9));
        }
        if (length > Frames.MAX_FRAME || length < Frames.REQUEST_HEADER) {
            throw new FrameException("a frame claims " + length + " bytes, outside [" + Frames.REQUEST_HEADER + ", "
                    + Frames.MAX_FRAME + "] (nothing was allocated for it)");
        }
        int proofAt = 12;
        sequence = header.getLong(proofAt + CallProof.SESSION_BYTES);
        if (call == Frames.Call.HELLO) {
            if (length - Frames.REQUEST_HEADER != HELLO_BYTES) {
                throw new FrameException("a Hello of " + (length - Frames.REQUEST_HEADER) + " bytes, not " + HELLO_BYTES);
            }
        } else {
            if (thread < 0) {
                throw new FrameException(call + " before Hello");
            }
            String refusal = server.checkProof(header, proofAt, call);
            if (refusal != null) {
                ByteBuf reply = error(ctx, Frames.REFUSED, refusal);
                ctx.writeAndFlush(reply);
                throw new FrameException("refused " + call + ": " + refusal);
            }
        }
        return length - Frames.REQUEST_HEADER;
    }

    @Override
    public void frame(ChannelHandlerContext ctx, ByteBuf header, ByteBuf body) {
        if (!body.isDirect()) {
            server.copies().heap(body.readableBytes());
        }
        if (call == Frames.Call.HELLO) {
            hello(ctx, body);
            return;
        }
        Frames.Call c = call;
        long seq = sequence;
        server.count(c);
        CompletableFuture<ByteBuf> reply;
        try {
            reply = switch (c) {
                case PULL_DENSE -> pullDense(ctx, body);
                case PUSH_DENSE -> pushDense(ctx, body);
                case PULL_SPARSE -> pullSparse(ctx, body);
                case PUSH_SPARSE -> pushSparse(ctx, body);
                case PULL_MANY -> pullMany(ctx, body);
                case PUSH_MANY -> pushMany(ctx, body);
                case HELLO -> throw new IllegalStateException("Hello is answered above");
            };
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        if (reply.isDone() && replied.isDone()) {
            ctx.writeAndFlush(answer(ctx, c, seq, reply));
            return;
        }
        // a reply that waits for other owners (a sync step's last push): the body stays until then, and the
        // replies after it wait for it, as the worker matches them in order
        body.retain();
        CompletableFuture<ByteBuf> pending = reply;
        pending.whenComplete((r, failure) -> body.release());
        // written on this connection's thread, so that a reply sent straight after it cannot overtake it
        replied = replied.thenCombine(pending.handle((r, failure) -> null), (a, b) -> null)
                .thenRunAsync(() -> ctx.writeAndFlush(answer(ctx, c, seq, pending)), ctx.executor());
    }

    /** The reply of a finished call, or its error reply. */
    private ByteBuf answer(ChannelHandlerContext ctx, Frames.Call c, long seq, CompletableFuture<ByteBuf> reply) {
        try {
            return reply.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof TableException || cause instanceof IllegalArgumentException
                    || cause instanceof IndexOutOfBoundsException) {
                return error(ctx, c, seq, Frames.BAD_REQUEST, cause.getMessage());
            }
            server.logFailure(cause instanceof Exception ex ? ex : e);
            return error(ctx, c, seq, Frames.FAILED, cause.toString());
        }
    }

    private void hello(ChannelHandlerContext ctx, ByteBuf body) {
        byte[] nonce = new byte[32];
        body.readBytes(nonce);
        int wanted = body.readInt();
        if (wanted < 0 || wanted >= server.threads()) {
            ctx.writeAndFlush(error(ctx, Frames.BAD_REQUEST, "network thread " + wanted + " is not in [0, "
                    + server.threads() + ")"));
            return;
        }
        byte[] session = server.openSession();
        byte[] proof = session == null ? new byte[32] : server.serverProof(nonce, session);
        ByteBuf reply = ctx.alloc().directBuffer();
        Frames.writeReplyHeader(reply, Frames.Call.HELLO, Frames.OK, sequence, 0);
        reply.writeInt(server.threads()).writeInt(shard.syncWorkers()).writeInt(shard.server())
                .writeInt(shard.servers()).writeBoolean(session != null)
                .writeBytes(session == null ? new byte[32] : session).writeBytes(proof);
        reply.writeInt(shard.sparseConfigs().size());
        shard.sparseConfigs().forEach(c -> {
            Frames.writeName(reply, c.name());
            reply.writeInt(c.dim());
        });
        reply.writeInt(wanted == 0 ? server.nextHome() : wanted);
        reply.setInt(0, reply.writerIndex() - Frames.LENGTH_BYTES);
        Channel channel = ctx.channel();
        EventLoop target = server.loop(wanted);
        thread = wanted;
        if (channel.eventLoop() == target) {
            ctx.writeAndFlush(reply);
            return;
        }
        // Nothing more is read here until the connection has moved to its thread (the worker waits for this reply).
        channel.config().setAutoRead(false);
        ctx.writeAndFlush(reply).addListener((ChannelFutureListener) written -> channel.deregister().addListener(
                gone -> target.register(channel).addListener(moved -> channel.config().setAutoRead(true))));
    }

    private CompletableFuture<ByteBuf> pullDense(ChannelHandlerContext ctx, ByteBuf body) {
        String param = Frames.readName(body);
        int block = body.readInt();
        requireOwner(shard.ownerOfDense(param, block), "dense " + param + " block " + block);
        long bytes = shard.denseBlock(param, block).spec().numel() * Float.BYTES;
        return rows(ctx, bytes, out -> shard.pullDenseAsync(param, block, out));
    }

    private CompletableFuture<ByteBuf> pushDense(ChannelHandlerContext ctx, ByteBuf body) {
        String param = Frames.readName(body);
        int block = body.readInt();
        requireOwner(shard.ownerOfDense(param, block), "dense " + param + " block " + block);
        long numel = shard.denseBlock(param, block).spec().numel();
        requireBytes(body.readableBytes(), numel * Float.BYTES, "dense " + param + " block " + block
                + ": the gradient", numel + " floats");
        return done(ctx, shard.pushDenseAsync(param, block, view(body, body.readableBytes())));
    }

    private CompletableFuture<ByteBuf> pullSparse(ChannelHandlerContext ctx, ByteBuf body) {
        String table = Frames.readName(body);
        int n = body.readInt();
        int dim = shard.sparseTable(table).config().dim();
        requireBytes(body.readableBytes(), (long) n * Long.BYTES, "sparse table " + table + ": the ids",
                n + " int64");
        MemorySegment ids = view(body, (long) n * Long.BYTES);
        requireOwnedIds(table, ids, n);
        return rows(ctx, (long) n * dim * Float.BYTES, out -> shard.pullSparseAsync(table, ids, n, out,
                lookup -> pulled.put(table, lookup)));
    }

    private CompletableFuture<ByteBuf> pushSparse(ChannelHandlerContext ctx, ByteBuf body) {
        String table = Frames.readName(body);
        int n = body.readInt();
        int dim = shard.sparseTable(table).config().dim();
        long idBytes = (long) n * Long.BYTES;
        requireBytes(body.readableBytes(), idBytes + (long) n * dim * Float.BYTES, "sparse table " + table
                + ": the ids and gradients", n + " int64 and " + n + " x dimension " + dim + " floats");
        MemorySegment ids = view(body, idBytes);
        if (shard.syncWorkers() > 0) {
            requireOwner(shard.ownerOfSparseSteps(table), "sync-mode pushes of sparse table " + table);
        } else {
            requireOwnedIds(table, ids, n);
        }
        body.skipBytes((int) idBytes);
        return done(ctx, shard.pushSparseAsync(table, ids, n, view(body, body.readableBytes()), pulled.remove(table)));
    }

    /**
     * One entry of a PULL_MANY: its rows' bytes, what puts them into its part of the reply, and whether it runs on
     * this thread alone (a dense block this thread owns).
     */
    private record Part(long bytes, Function<MemorySegment, CompletableFuture<Void>> fill, boolean here) {
    }

    private CompletableFuture<ByteBuf> pullMany(ChannelHandlerContext ctx, ByteBuf body) {
        List<Part> parts = new ArrayList<>();
        for (int i = count(body, "dense blocks"); i > 0; i--) {
            String param = Frames.readName(body);
            int block = readInt(body, "dense " + param + ": the block");
            long bytes = shard.denseBlock(param, block).spec().numel() * Float.BYTES;
            parts.add(new Part(bytes, out -> shard.pullDenseAsync(param, block, out),
                    shard.ownerOfDense(param, block) == thread));
        }
        for (int i = count(body, "sparse tables"); i > 0; i--) {
            String table = Frames.readName(body);
            int n = readInt(body, "sparse table " + table + ": the count of ids");
            int dim = shard.sparseTable(table).config().dim();
            MemorySegment ids = take(body, (long) n * Long.BYTES, "sparse table " + table + ": the ids", n + " int64");
            parts.add(new Part((long) n * dim * Float.BYTES, out -> shard.pullSparseAsync(table, ids, n, out,
                    lookup -> pulled.put(table, lookup)), false));
        }
        requireBytes(body.readableBytes(), 0, "pullMany: what follows its last entry", "nothing");
        long total = parts.stream().mapToLong(Part::bytes).sum();
        return rows(ctx, total, out -> {
            List<Supplier<CompletableFuture<Void>>> starts = new ArrayList<>();
            List<Supplier<CompletableFuture<Void>>> here = new ArrayList<>();
            long at = 0;
            for (Part p : parts) {
                MemorySegment slice = out.asSlice(at, p.bytes());
                (p.here() ? here : starts).add(() -> p.fill().apply(slice));
                at += p.bytes();
            }
            starts.addAll(here);
            return allStarted(starts);
        });
    }

    private CompletableFuture<ByteBuf> pushMany(ChannelHandlerContext ctx, ByteBuf body) {
        List<Supplier<CompletableFuture<Void>>> starts = new ArrayList<>();
        List<Supplier<CompletableFuture<Void>>> here = new ArrayList<>();
        for (int i = count(body, "dense blocks"); i > 0; i--) {
            String param = Frames.readName(body);
            int block = readInt(body, "dense " + param + ": the block");
            int floats = readInt(body, "dense " + param + " block " + block + ": the count of floats");
            long numel = shard.denseBlock(param, block).spec().numel();
            requireBytes(floats, numel, "dense " + param + " block " + block + ": the gradient's floats",
                    "the block's numel");
            MemorySegment grad = take(body, numel * Float.BYTES, "dense " + param + " block " + block
                    + ": the gradient", numel + " floats");
            (shard.ownerOfDense(param, block) == thread ? here : starts)
                    .add(() -> shard.pushDenseAsync(param, block, grad));
        }
        for (int i = count(body, "sparse tables"); i > 0; i--) {
            String table = Frames.readName(body);
            int n = readInt(body, "sparse table " + table + ": the count of ids");
            int sent = readInt(body, "sparse table " + table + ": the row dimension");
            int dim = shard.sparseTable(table).config().dim();
            if (sent != dim) {
                throw new IllegalArgumentException("sparse table " + table + " has rows of dimension " + dim
                        + " on this server, the worker sent rows of " + sent);
            }
            MemorySegment ids = take(body, (long) n * Long.BYTES, "sparse table " + table + ": the ids", n + " int64");
            MemorySegment grads = take(body, (long) n * dim * Float.BYTES, "sparse table " + table
                    + ": the gradients", n + " x dimension " + dim + " floats");
            SparseTable.Lookup lookup = pulled.remove(table);
            starts.add(() -> shard.pushSparseAsync(table, ids, n, grads, lookup));
        }
        requireBytes(body.readableBytes(), 0, "pushMany: what follows its last entry", "nothing");
        starts.addAll(here);
        return done(ctx, allStarted(starts));
    }

    /**
     * Starts each in turn; done when all are. If one fails to start, the ones already started still run to their end
     * (they write into the reply or read the request) before the failure is reported.
     */
    private static CompletableFuture<Void> allStarted(List<Supplier<CompletableFuture<Void>>> starts) {
        List<CompletableFuture<Void>> started = new ArrayList<>();
        for (Supplier<CompletableFuture<Void>> start : starts) {
            try {
                started.add(start.get());
            } catch (RuntimeException e) {
                return CompletableFuture.allOf(started.toArray(CompletableFuture[]::new)).handle((ok, failure) -> {
                    throw new CompletionException(e);
                });
            }
        }
        return CompletableFuture.allOf(started.toArray(CompletableFuture[]::new));
    }

    private static int count(ByteBuf body, String what) {
        int n = readInt(body, "the count of " + what);
        if (n < 0) {
            throw new IllegalArgumentException("a count of " + n + " " + what);
        }
        return n;
    }

    private static int readInt(ByteBuf body, String what) {
        if (body.readableBytes() < Integer.BYTES) {
            throw new IllegalArgumentException(what + " is missing: the frame ends " + body.readableBytes()
                    + " bytes before it");
        }
        return body.readInt();
    }

    /** The next {@code bytes} of {@code body} as a segment over the same memory, and skips them. */
    private static MemorySegment take(ByteBuf body, long bytes, String what, String shape) {
        if (bytes < 0 || body.readableBytes() < bytes) {
            throw new IllegalArgumentException(what + ": " + bytes + " bytes (" + shape + ") do not fit the "
                    + body.readableBytes() + " left in the frame");
        }
        MemorySegment segment = view(body, bytes);
        body.skipBytes((int) bytes);
        return segment;
    }

    /** A reply of {@code bytes} of rows that {@code fill} puts straight into its direct buffer. */
    private CompletableFuture<ByteBuf> rows(ChannelHandlerContext ctx, long bytes,
                                            Function<MemorySegment, CompletableFuture<Void>> fill) {
        ByteBuf reply = rowsReply(ctx, bytes);
        CompletableFuture<Void> filled;
        try {
            filled = fill.apply(MemorySegment.ofBuffer(reply.nioBuffer(reply.writerIndex(), (int) bytes)));
        } catch (RuntimeException e) {
            reply.release();
            throw e;
        }
        return filled.handle((ok, failure) -> {
            if (failure != null) {
                reply.release();
                throw failure instanceof CompletionException c ? c : new CompletionException(failure);
            }
            return reply.writerIndex(reply.writerIndex() + (int) bytes);
        });
    }

    /** Bytes of {@code body} from its reader index, as a segment over the same memory. */
    private static MemorySegment view(ByteBuf body, long bytes) {
        return MemorySegment.ofBuffer(body.nioBuffer(body.readerIndex(), (int) bytes));
    }

    private ByteBuf rowsReply(ChannelHandlerContext ctx, long bytes) {
        if (bytes > Frames.MAX_FRAME - Frames.REPLY_HEADER) {
            throw new IllegalArgumentException("a reply of " + bytes + " bytes exceeds the frame limit "
                    + Frames.MAX_FRAME);
        }
        int size = (int) (Frames.LENGTH_BYTES + Frames.REPLY_HEADER + bytes);
        ByteBuf reply = keptReply.take(ctx.alloc(), size);
        Frames.writeReplyHeader(reply, call, Frames.OK, sequence, bytes);
        return reply;
    }

    private CompletableFuture<ByteBuf> done(ChannelHandlerContext ctx, CompletableFuture<Void> applied) {
        Frames.Call c = call;
        long seq = sequence;
        return applied.thenApply(ok -> {
            ByteBuf reply = ctx.alloc().directBuffer(Frames.LENGTH_BYTES + Frames.REPLY_HEADER);
            Frames.writeReplyHeader(reply, c, Frames.OK, seq, 0);
            return reply;
        });
    }

    private ByteBuf error(ChannelHandlerContext ctx, short status, String message) {
        return error(ctx, call, sequence, status, message);
    }

    private static ByteBuf error(ChannelHandlerContext ctx, Frames.Call c, long seq, short status, String message) {
        byte[] text = String.valueOf(message).getBytes(StandardCharsets.UTF_8);
        ByteBuf reply = ctx.alloc().directBuffer(Frames.LENGTH_BYTES + Frames.REPLY_HEADER + text.length);
        Frames.writeReplyHeader(reply, c, status, seq, text.length);
        return reply.writeBytes(text);
    }

    private void requireOwner(int owner, String what) {
        if (owner != thread) {
            throw new IllegalArgumentException(what + " belongs to network thread " + owner + " of "
                    + server.threads() + ", and came to thread " + thread + "; route requests by their owner");
        }
    }

    private void requireOwnedIds(String table, MemorySegment ids, int n) {
        int threads = server.threads();
        if (threads == 1) {
            return;
        }
        SparseTable t = shard.sparseTable(table);
        for (int i = 0; i < n; i++) {
            long id = ids.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
            int owner = t.ownerOf(id);
            if (owner != thread) {
                throw new IllegalArgumentException("sparse table " + table + ": id " + id + " belongs to network"
                        + " thread " + owner + " of " + threads + ", and came to thread " + thread
                        + "; route ids with KeyHash.threadOf");
            }
        }
    }

    private static void requireBytes(long got, long expected, String what, String shape) {
        if (got != expected) {
            throw new IllegalArgumentException(what + " came as " + got + " bytes, expected " + expected + " (" + shape
                    + ")");
        }
    }

    @Override
    public void dropped(ChannelHandlerContext ctx, String why) {
        server.logDrop(ctx.channel(), why);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof IdleStateEvent && thread < 0) {
            server.logDrop(ctx.channel(), "no Hello within the deadline");
            ctx.close();
            return;
        }
        super.userEventTriggered(ctx, event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        server.logDrop(ctx.channel(), String.valueOf(cause.getMessage()));
        ctx.close();
    }
}
