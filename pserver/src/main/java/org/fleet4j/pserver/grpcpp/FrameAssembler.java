package org.fleet4j.pserver.grpcpp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;

/**
 * Cuts a connection's bytes into frames without trusting their lengths: the header is read into a small buffer of
 * its own, checked by the {@link Sink} (magic, version, call, the claimed length against the limit, and on a server
 * the job-token proof) and only then is room made for the body, so a frame claiming 2 GB costs nothing but its
 * header. A body that arrived in one read is handed on as a slice of it (no copy); one spread over reads gets one
 * direct buffer (for a large body, the one the connection keeps, {@link KeptBuffer}): what came with the header is
 * copied into it, and the reads after that go straight into it ({@link InPlaceReads}, {@link #readTarget()}). A
 * connection that breaks the protocol, stops mid-frame or closes mid-frame is dropped and the {@link Sink} told why.
 */
final class FrameAssembler extends ChannelInboundHandlerAdapter {
    /** What a connection's frames go to. */
    interface Sink {
        /** The body's length for a complete {@code header} (length prefix included); throws to drop the connection. */
        long bodyBytes(ChannelHandlerContext ctx, ByteBuf header) throws FrameException;

        /** A whole frame; the assembler releases the body and reuses the header buffer afterwards. */
        void frame(ChannelHandlerContext ctx, ByteBuf header, ByteBuf body);

        /** The connection was dropped, or ended mid-frame, for {@code why}. */
        void dropped(ChannelHandlerContext ctx, String why);
    }

    private final int headerBytes;
    private final Sink sink;
    private final CopyCount copies;
    private final KeptBuffer kept;
    private ByteBuf header;
    private ByteBuf body;
    /** The part of {@link #body} lent to the channel's current read, or null. */
    private ByteBuf target;
    /** Bytes of {@link #body} copied into it from reads (the rest the socket wrote in place). */
    private long copied;
    private long bodyBytes = -1;
    private boolean dropped;

    FrameAssembler(int headerBytes, Sink sink, CopyCount copies) {
        this.headerBytes = Frames.LENGTH_BYTES + headerBytes;
        this.sink = sink;
        this.copies = copies;
        this.kept = new KeptBuffer(copies);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        header = ctx.alloc().directBuffer(headerBytes, headerBytes);
    }

    /**
     * Where the channel's next read should go: the rest of the body being put together, so the socket writes it in
     * place; null when no body is part way (an ordinary read buffer then). The read comes back to
     * {@link #channelRead} as this buffer.
     */
    ByteBuf readTarget() {
        target = body == null || dropped ? null : body.retainedSlice(body.writerIndex(), body.writableBytes()).clear();
        return target;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        if (in == target) {
            target = null;
            readInPlace(ctx, in);
            return;
        }
        try {
            while (in.isReadable() && !dropped) {
                if (bodyBytes < 0) {
                    in.readBytes(header, Math.min(in.readableBytes(), header.writableBytes()));
                    if (header.isWritable()) {
                        return;
                    }
                    try {
                        bodyBytes = sink.bodyBytes(ctx, header);
                    } catch (FrameException e) {
                        drop(ctx, e.getMessage());
                        return;
                    }
                    if (bodyBytes == 0) {
                        deliver(ctx, ctx.alloc().directBuffer(0, 0), 0);
                    }
                } else if (body == null && in.readableBytes() >= bodyBytes) {
                    deliver(ctx, in.readRetainedSlice((int) bodyBytes), 0);
                } else {
                    if (body == null) {
                        body = kept.take(ctx.alloc(), (int) bodyBytes);
                    }
                    int n = Math.min(in.readableBytes(), body.writableBytes());
                    in.readBytes(body, n);
                    copied += n;
                    deliverIfWhole(ctx);
                }
            }
        } finally {
            in.release();
        }
    }

    /** A read the socket wrote into the body itself: nothing to copy. */
    private void readInPlace(ChannelHandlerContext ctx, ByteBuf in) {
        int n = in.readableBytes();
        in.release();
        if (body == null || dropped) {
            return;
        }
        copies.readInPlace(n);
        body.writerIndex(body.writerIndex() + n);
        deliverIfWhole(ctx);
    }

    private void deliverIfWhole(ChannelHandlerContext ctx) {
        if (!body.isWritable()) {
            ByteBuf whole = body;
            body = null;
            deliver(ctx, whole, copied);
            copied = 0;
        }
    }

    private void deliver(ChannelHandlerContext ctx, ByteBuf frameBody, long copiedBytes) {
        copies.received(bodyBytes, copiedBytes);
        bodyBytes = -1;
        try {
            sink.frame(ctx, header, frameBody);
        } finally {
            frameBody.release();
            header.clear();
        }
    }

    /** True while a frame has begun and not ended. */
    private boolean midFrame() {
        return header.isReadable() || body != null;
    }

    private void drop(ChannelHandlerContext ctx, String why) {
        dropped = true;
        sink.dropped(ctx, why);
        ctx.close();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof IdleStateEvent && midFrame() && !dropped) {
            drop(ctx, "a frame stopped after " + received() + " bytes (nothing more within the deadline)");
            return;
        }
        super.userEventTriggered(ctx, event);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (midFrame() && !dropped) {
            dropped = true;
            sink.dropped(ctx, "a truncated frame: the connection closed after " + received() + " bytes of it");
        }
        super.channelInactive(ctx);
    }

    private String received() {
        long got = header.writerIndex() + (body == null ? 0 : body.writerIndex());
        return got + (bodyBytes >= 0 ? " of " + (headerBytes + bodyBytes) : "");
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        target = null;
        header.release();
        kept.release();
        if (body != null) {
            body.release();
            body = null;
        }
    }
}
