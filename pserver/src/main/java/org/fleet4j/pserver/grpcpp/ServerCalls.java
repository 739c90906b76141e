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
import org.fleet4j.pserver.table.TableException;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.CallProof;

/**
 * One worker connection's calls on a grpc++ server. Hello moves the connection to the network thread the worker asked
 * for; from then on every request is answered on that thread, from the table shards it owns ({@link Ownership}), with
 * no lock of ours and no hand-off to another thread. Ids and gradients are read where they arrived (a view of the
 * direct receive buffer) and rows are pulled straight into the reply's direct buffer.
 */
final class ServerCalls extends ChannelInboundHandlerAdapter implements FrameAssembler.Sink {
    private static final int HELLO_BYTES = 32 + Integer.BYTES;

    private final DataServer server;
    private final TableShard shard;
    /** The thread this connection's worker asked for in Hello; -1 before Hello. */
    private int thread = -1;
    private long sequence;
    private Frames.Call call;

    ServerCalls(DataServer server) {
        this.server = server;
        this.shard = server.shard();
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
        ByteBuf reply;
        try {
            reply = switch (call) {
                case PULL_DENSE -> pullDense(ctx, body);
                case PUSH_DENSE -> pushDense(ctx, body);
                case PULL_SPARSE -> pullSparse(ctx, body);
                case PUSH_SPARSE -> pushSparse(ctx, body);
                case HELLO -> throw new IllegalStateException("Hello is answered above");
            };
        } catch (TableException | IllegalArgumentException | IndexOutOfBoundsException e) {
            reply = error(ctx, Frames.BAD_REQUEST, e.getMessage());
        } catch (RuntimeException e) {
            server.logFailure(e);
            reply = error(ctx, Frames.FAILED, e.toString());
        }
        ctx.writeAndFlush(reply);
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

    private ByteBuf pullDense(ChannelHandlerContext ctx, ByteBuf body) {
        String param = Frames.readName(body);
        int block = body.readInt();
        requireOwner(Ownership.ofBlock(param, block, server.threads()), "dense " + param + " block " + block);
        long bytes = shard.denseBlock(param, block).spec().numel() * Float.BYTES;
        ByteBuf reply = rowsReply(ctx, bytes);
        try {
            shard.pullDense(param, block, rows(reply, bytes));
        } catch (RuntimeException e) {
            reply.release();
            throw e;
        }
        reply.writerIndex(reply.writerIndex() + (int) bytes);
        return reply;
    }

    private ByteBuf pushDense(ChannelHandlerContext ctx, ByteBuf body) {
        String param = Frames.readName(body);
        int block = body.readInt();
        requireOwner(Ownership.ofBlock(param, block, server.threads()), "dense " + param + " block " + block);
        long numel = shard.denseBlock(param, block).spec().numel();
        requireBytes(body.readableBytes(), numel * Float.BYTES, "dense " + param + " block " + block
                + ": the gradient", numel + " floats");
        shard.pushDense(param, block, view(body, body.readableBytes()));
        return done(ctx);
    }

    private ByteBuf pullSparse(ChannelHandlerContext ctx, ByteBuf body) {
        String table = Frames.readName(body);
        int n = body.readInt();
        int dim = shard.sparseTable(table).config().dim();
        requireBytes(body.readableBytes(), (long) n * Long.BYTES, "sparse table " + table + ": the ids",
                n + " int64");
        MemorySegment ids = view(body, (long) n * Long.BYTES);
        requireOwnedIds(table, ids, n);
        long bytes = (long) n * dim * Float.BYTES;
        ByteBuf reply = rowsReply(ctx, bytes);
        try {
            shard.pullSparse(table, ids, n, rows(reply, bytes));
        } catch (RuntimeException e) {
            reply.release();
            throw e;
        }
        reply.writerIndex(reply.writerIndex() + (int) bytes);
        return reply;
    }

    private ByteBuf pushSparse(ChannelHandlerContext ctx, ByteBuf body) {
        String table = Frames.readName(body);
        int n = body.readInt();
        int dim = shard.sparseTable(table).config().dim();
        long idBytes = (long) n * Long.BYTES;
        requireBytes(body.readableBytes(), idBytes + (long) n * dim * Float.BYTES, "sparse table " + table
                + ": the ids and gradients", n + " int64 and " + n + " x dimension " + dim + " floats");
        MemorySegment ids = view(body, idBytes);
        if (shard.syncWorkers() > 0) {
            requireOwner(Ownership.ofTable(table, server.threads()), "sync-mode pushes of sparse table " + table);
        } else {
            requireOwnedIds(table, ids, n);
        }
        body.skipBytes((int) idBytes);
        shard.pushSparse(table, ids, n, view(body, body.readableBytes()));
        return done(ctx);
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
        ByteBuf reply = ctx.alloc().directBuffer(size, size);
        Frames.writeReplyHeader(reply, call, Frames.OK, sequence, bytes);
        return reply;
    }

    /** The reply's room for {@code bytes} of rows, after its header. */
    private static MemorySegment rows(ByteBuf reply, long bytes) {
        return MemorySegment.ofBuffer(reply.nioBuffer(reply.writerIndex(), (int) bytes));
    }

    private ByteBuf done(ChannelHandlerContext ctx) {
        ByteBuf reply = ctx.alloc().directBuffer(Frames.LENGTH_BYTES + Frames.REPLY_HEADER);
        Frames.writeReplyHeader(reply, call, Frames.OK, sequence, 0);
        return reply;
    }

    private ByteBuf error(ChannelHandlerContext ctx, short status, String message) {
        byte[] text = String.valueOf(message).getBytes(StandardCharsets.UTF_8);
        ByteBuf reply = ctx.alloc().directBuffer(Frames.LENGTH_BYTES + Frames.REPLY_HEADER + text.length);
        Frames.writeReplyHeader(reply, call, status, sequence, text.length);
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
        for (int i = 0; i < n; i++) {
            long id = ids.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
            int owner = Ownership.ofId(id, threads);
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
