package org.fleet4j.pserver.table;

import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * The one thread that touches a set of stripes and blocks: tasks from any thread go into a lock-free queue (many
 * producers, this one consumer) and run here one after another in the order they came. The thread starts with the
 * first task and ends after {@link #IDLE} without one (a shard nobody serves holds no thread); a task arriving then
 * starts a new one. It is a daemon, named for its shard.
 */
final class OwnerThread implements Executor {
    private static final System.Logger LOG = System.getLogger(OwnerThread.class.getName());
    static final Duration IDLE = Duration.ofSeconds(2);

    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean running = new AtomicBoolean();
    private final String name;
    private volatile Thread thread;
    private volatile boolean sleeping;

    OwnerThread(String name) {
        this.name = name;
    }

    @Override
    public void execute(Runnable task) {
        tasks.offer(task);
        if (!running.get() && running.compareAndSet(false, true)) {
            Thread t = Thread.ofPlatform().daemon().name(name).unstarted(this::drain);
            thread = t; // before it runs, so a producer that sees it sleeping can wake it
            t.start();
        } else if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    private void drain() {
        long idleSince = System.nanoTime();
        while (true) {
            Runnable task = tasks.poll();
            if (task != null) {
                runSafely(task);
                idleSince = System.nanoTime();
                continue;
            }
            sleeping = true;
            task = tasks.poll();
            if (task == null) {
                LockSupport.parkNanos(this, IDLE.toNanos());
            }
            sleeping = false;
            if (task != null) {
                runSafely(task);
                idleSince = System.nanoTime();
            } else if (System.nanoTime() - idleSince >= IDLE.toNanos() && retire()) {
                return;
            }
        }
    }

    /** Ends this thread unless a task came meanwhile (its producer saw it running and did not start another). */
    private boolean retire() {
        running.set(false);
        return tasks.isEmpty() || !running.compareAndSet(false, true);
    }

    private void runSafely(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.ERROR, name + ": a table task failed outside its request", e);
        }
    }
}
