package org.fleet4j.pserver.worker;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.fleet4j.pserver.transport.ThreadJoin;

/**
 * The threads of a communicator, named and remembered, so that its close can wait for the threads themselves to end
 * (an executor's termination is reported before its last worker thread has finished exiting).
 */
final class CommunicatorThreads {
    private final List<Thread> started = new CopyOnWriteArrayList<>();

    /** A factory of daemon threads named {@code prefix-N}. */
    ThreadFactory named(String prefix) {
        AtomicInteger next = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + next.getAndIncrement());
            t.setDaemon(true);
            started.add(t);
            return t;
        };
    }

    ExecutorService pool(int threads, String prefix) {
        return Executors.newFixedThreadPool(threads, named(prefix));
    }

    /** Interrupts {@code executors}' work and waits up to {@code patience} in all for every thread made here to end. */
    void stop(Duration patience, ExecutorService... executors) {
        for (ExecutorService e : executors) {
            e.shutdownNow();
        }
        started.forEach(Thread::interrupt);
        ThreadJoin.all(started, patience);
    }
}
