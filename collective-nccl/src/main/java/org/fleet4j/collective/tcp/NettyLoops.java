package org.fleet4j.collective.tcp;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/** The process-wide Netty event loops (native epoll when the platform has it), shared by every TCP group. */
final class NettyLoops {
    static final boolean EPOLL = Epoll.isAvailable();
    /** Direct buffers, so that received payloads reduce straight from off-heap memory with vector code. */
    static final PooledByteBufAllocator ALLOCATOR = new PooledByteBufAllocator(true);
    /**
     * Reads of 64 KiB to 1 MiB: Netty's default starts at 2 KiB and stops at 64 KiB, so a 256 KiB frame took
     * dozens of reads, each appended to the decoder's cumulation.
     */
    static final AdaptiveRecvByteBufAllocator READS = new AdaptiveRecvByteBufAllocator(64 << 10, 256 << 10, 1 << 20);
    /** Kernel socket buffers big enough to hold several chunks in flight. */
    static final int SOCKET_BUFFER_BYTES = 4 << 20;
    private static volatile EventLoopGroup group;

    private NettyLoops() {
    }

    static EventLoopGroup group() {
        EventLoopGroup g = group;
        if (g == null) {
            synchronized (NettyLoops.class) {
                g = group;
                if (g == null) {
                    IoHandlerFactory io = EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
                    int threads = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
                    g = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("fleet4j-netty", true), io);
                    group = g;
                }
            }
        }
        return g;
    }

    static Class<? extends ServerChannel> serverChannel() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    static Class<? extends SocketChannel> socketChannel() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }
}
