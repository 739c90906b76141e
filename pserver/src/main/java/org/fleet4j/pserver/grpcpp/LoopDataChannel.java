package org.fleet4j.pserver.grpcpp;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import org.fleet4j.pserver.transport.PsException;

/**
 * A data connection served by one of the worker's network threads (a Netty event loop): a caller's request is handed
 * to that thread, which writes it, reads the replies and completes the futures waiting for them. The queue of
 * requests waiting is touched only on that thread.
 */
final class LoopDataChannel extends DataChannel {
    private final Channel channel;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();

    LoopDataChannel(String where, EventLoopGroup loop, InetSocketAddress address, Duration deadline,
                    CopyCount copies, LongAdder wireBytes) {
        super(where, copies, wireBytes);
        Replies replies = new Replies();
        Bootstrap bootstrap = new Bootstrap().group(loop).channel(NetworkLoops.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, deadline.toMillis()))
                .handler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        FrameAssembler frames = new FrameAssembler(Frames.REPLY_HEADER, replies, copies);
                        InPlaceReads.install(ch, frames);
                        ch.pipeline().addLast(frames, replies);
                    }
                });
        channel = bootstrap.connect(address).syncUninterruptibly().channel();
    }

    @Override
    CompletableFuture<ByteBuf> send(ByteBuf frame, CompletableFuture<Void> written) {
        Reply done = new Reply(this);
        String closed = closedBecause;
        if (closed != null) {
            frame.release();
            fail(done, written, closed);
            return done;
        }
        long seq = sequenceOf(frame);
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

    /** Requests sent and not yet answered (asked on the connection's own thread, where the queue lives). */
    @Override
    int inFlight() {
        return channel.eventLoop().submit(pending::size).syncUninterruptibly().getNow();
    }

    /** On the event loop. */
    @Override
    void closeBecause(String why) {
        if (closedBecause == null) {
            closedBecause = why;
        }
        for (Pending p = pending.poll(); p != null; p = pending.poll()) {
            p.reply().completeExceptionally(new PsException(why));
        }
    }

    @Override
    void close() {
        channel.close().syncUninterruptibly();
    }

    /** The channel's end of the pipeline: whole replies, and the ways a connection ends. */
    private final class Replies extends ChannelInboundHandlerAdapter implements FrameAssembler.Sink {
        @Override
        public long bodyBytes(ChannelHandlerContext ctx, ByteBuf header) throws FrameException {
            return replyBodyBytes(header);
        }

        @Override
        public void frame(ChannelHandlerContext ctx, ByteBuf header, ByteBuf body) {
            if (!answer(pending.poll(), header, body)) {
                ctx.close();
            }
        }

        @Override
        public void dropped(ChannelHandlerContext ctx, String why) {
            closeBecause("the connection broke: " + why);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            closeBecause("the server closed the connection (is it alive?)");
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            closeBecause("the connection failed: " + cause.getMessage());
            ctx.close();
        }
    }
}
