package org.fleet4j.pserver.grpc;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.fleet4j.pserver.transport.ThreadJoin;

/**
 * The threads of one server or connection, rather than grpc-java's process-wide defaults: they are stopped and joined
 * on close, so closing leaves no thread behind. All are daemons: a forgotten close does not keep a JVM alive.
 */
final class NetworkThreads {
    private final List<Thread> started = new CopyOnWriteArrayList<>();

    /** Event loops of {@code threads} threads named {@code name-...}. */
    EventLoopGroup eventLoops(int threads, String name) {
        return new MultiThreadIoEventLoopGroup(threads, named(name), NioIoHandler.newFactory());
    }

    /** A factory of daemon threads named {@code name-...} (Netty's, whose threads its event loops run best on). */
    ThreadFactory named(String name) {
        DefaultThreadFactory netty = new DefaultThreadFactory(name, true);
        return task -> {
            Thread t = netty.newThread(task);
            started.add(t);
            return t;
        };
    }

    /**
     * Stops the loops and the executors and waits for every thread made here to end, at most {@code patience} for
     * each group; true if all have ended.
     */
    boolean shutdown(Duration patience, EventLoopGroup loops, ExecutorService... executors) {
        for (ExecutorService e : executors) {
            e.shutdownNow();
        }
        loops.shutdownGracefully(0, patience.toMillis(), TimeUnit.MILLISECONDS);
        return ThreadJoin.all(started, patience);
    }
}
