package org.fleet4j.pserver.grpcpp;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SelectStrategy;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import java.nio.channels.spi.SelectorProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.fleet4j.pserver.transport.ThreadJoin;

/**
 * The network threads of one grpc++ server or connection: Netty event loops on the native epoll transport (NIO
 * where epoll is unavailable, said once per process), each started at once, pinned to its own core when the settings
 * say so, and busy-polling (an epoll wait with zero timeout, never sleeping) when they say so. Closing stops and
 * joins them all.
 */
final class NetworkLoops implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(NetworkLoops.class.getName());
    private static final boolean EPOLL = Epoll.isAvailable();
    private static final AtomicInteger FALLBACK_SAID = new AtomicInteger();

    private final MultiThreadIoEventLoopGroup group;
    private final List<EventLoop> loops = new ArrayList<>();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();
    /** OS thread id of each pinned thread to the CPU it was pinned to. */
    private final Map<Integer, Integer> pinned = new ConcurrentHashMap<>();

    /** Thread {@code i} is pinned (when the settings say so) to the allowed CPU at {@code firstCpu + i}, round. */
    NetworkLoops(NetworkSettings settings, String name, int firstCpu) {
        if (!EPOLL && FALLBACK_SAID.getAndIncrement() == 0) {
            LOG.log(System.Logger.Level.WARNING, "grpc++: Netty's native epoll transport is unavailable here ("
                    + Epoll.unavailabilityCause() + "); using NIO");
        }
        List<Integer> cpus = settings.pinCores() && CorePinning.available() ? CorePinning.allowedCpus() : List.of();
        if (settings.pinCores() && !CorePinning.available()) {
            LOG.log(System.Logger.Level.WARNING, "grpc++: " + name + " threads stay unpinned: this OS has no"
                    + " sched_setaffinity");
        }
        DefaultThreadFactory netty = new DefaultThreadFactory(name, true);
        AtomicInteger next = new AtomicInteger();
        group = new MultiThreadIoEventLoopGroup(settings.threads(), (Runnable task) -> {
            int index = next.getAndIncrement();
            Thread t = netty.newThread(() -> {
                if (!cpus.isEmpty()) {
                    int cpu = cpus.get((firstCpu + index) % cpus.size());
                    if (CorePinning.pin(cpu)) {
                        pinned.put(CorePinning.threadId(), cpu);
                    } else {
                        LOG.log(System.Logger.Level.WARNING, "grpc++: the OS refused to pin " + name + " thread "
                                + index + " to CPU " + cpu + "; it runs unpinned");
                    }
                }
                task.run();
            });
            threads.add(t);
            return t;
        }, ioHandler(settings.busyPoll()));
        for (EventExecutor e : group) {
            loops.add((EventLoop) e);
            e.submit(() -> { }).syncUninterruptibly();
        }
    }

    private static IoHandlerFactory ioHandler(boolean busyPoll) {
        if (EPOLL) {
            return busyPoll ? EpollIoHandler.newFactory(0, () -> (now, hasTasks) -> SelectStrategy.BUSY_WAIT)
                    : EpollIoHandler.newFactory();
        }
        return busyPoll ? NioIoHandler.newFactory(SelectorProvider.provider(),
                () -> (selectNow, hasTasks) -> selectNow.get()) : NioIoHandler.newFactory();
    }

    static boolean epoll() {
        return EPOLL;
    }

    static Class<? extends ServerChannel> serverChannel() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    static Class<? extends Channel> socketChannel() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    MultiThreadIoEventLoopGroup group() {
        return group;
    }

    /** Loop {@code i} of {@link #size()}, in a fixed order. */
    EventLoop loop(int i) {
        return loops.get(i);
    }

    int size() {
        return loops.size();
    }

    /** The pinned threads: OS thread id to CPU. */
    Map<Integer, Integer> pinnedThreads() {
        return Map.copyOf(pinned);
    }

    /** Stops the loops and waits up to {@code patience} for their threads to end; true if all have. */
    boolean shutdown(Duration patience) {
        group.shutdownGracefully(0, patience.toMillis(), TimeUnit.MILLISECONDS);
        return ThreadJoin.all(threads, patience);
    }

    @Override
    public void close() {
        shutdown(Duration.ofSeconds(5));
    }
}
