package org.fleet4j.pserver.grpc;

import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.ByteBufAllocator;
import io.grpc.netty.shaded.io.netty.channel.ChannelDuplexHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelFactory;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelPromise;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts the bytes a connection's sockets send and receive: the first handler of each channel's pipeline, next to
 * the socket, so it sees the bytes exactly as they go out and come in (HTTP/2 frames, headers, pings), below
 * everything gRPC adds. Shared by the channels of one connection (a reconnect opens a new one).
 */
@ChannelHandler.Sharable
final class WireByteCounter extends ChannelDuplexHandler {
    private final AtomicLong bytes = new AtomicLong();
    /** The buffer allocator of the channel that connected last (null before one has). */
    private volatile ByteBufAllocator allocator;

    /** Plain NIO socket channels, each with this counter first in its pipeline. */
    ChannelFactory<NioSocketChannel> channels() {
        return () -> {
            NioSocketChannel channel = new NioSocketChannel();
            channel.pipeline().addFirst("fleet4j-wire-bytes", this);
            return channel;
        };
    }

    long bytes() {
        return bytes.get();
    }

    ByteBufAllocator allocator() {
        return allocator;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        allocator = ctx.alloc();
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf b) {
            bytes.addAndGet(b.readableBytes());
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf b) {
            bytes.addAndGet(b.readableBytes());
        }
        ctx.write(msg, promise);
    }
}
