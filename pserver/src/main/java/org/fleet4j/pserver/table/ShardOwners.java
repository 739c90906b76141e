package org.fleet4j.pserver.table;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Who runs a shard's table work: owner {@code i} is the only executor that ever touches the stripes and blocks given
 * to it, so updates need no lock (single writer) and a row is never read half-updated. By default each owner is an
 * {@link OwnerThread}; a transport whose network threads should own the shard's parts themselves (sharing-nothing)
 * hands its executors in with {@link TableShard#runOn}, each of which must run all its tasks on one thread of its
 * own, one at a time in order. Work for such an owner asked for on that very thread runs at once, in place: the
 * thread is the single writer already, and a request it received needs no hand-off.
 */
public final class ShardOwners {
    private static final long PROBE_SECONDS = 10;

    private final String name;
    private volatile Executor[] owners;
    /** Owner {@code i}'s one thread where a transport's executors own the parts; null entries for OwnerThreads. */
    private volatile Thread[] threads;

    ShardOwners(int count, String name) {
        this.name = name;
        useOwnThreads(count);
    }

    /** Owner threads by default: one per core, at most 4. */
    static int defaultCount() {
        return Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
    }

    public int size() {
        return owners.length;
    }

    /** From now on {@code count} {@link OwnerThread}s own the parts. */
    void useOwnThreads(int count) {
        Executor[] own = new Executor[count];
        for (int i = 0; i < count; i++) {
            own[i] = new OwnerThread(name + "-" + i);
        }
        threads = new Thread[count];
        owners = own;
    }

    /** From now on {@code executors.get(i)} is owner {@code i}; each is asked once which thread it runs on. */
    void replace(List<? extends Executor> executors) {
        if (executors.isEmpty()) {
            throw new IllegalArgumentException(name + ": a shard needs at least one owner, no executor was given");
        }
        Thread[] found = new Thread[executors.size()];
        for (int i = 0; i < found.length; i++) {
            try {
                found[i] = CompletableFuture.supplyAsync(Thread::currentThread, executors.get(i))
                        .get(PROBE_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(name + ": interrupted while asking owner " + i + " for its thread", e);
            } catch (ExecutionException | TimeoutException e) {
                throw new IllegalStateException(name + ": executor " + i + " (" + executors.get(i) + ") ran no task"
                        + " within " + PROBE_SECONDS + " s; give running single-thread executors", e);
            }
        }
        threads = found;
        owners = executors.toArray(Executor[]::new);
    }

    /**
     * The owner whose thread is the calling thread (a transport's network thread that owns parts), or -1. A request
     * split over owners queues the other owners' parts before it runs this one's in place, so that they run at the
     * same time as it rather than after it.
     */
    int ownerHere() {
        Thread[] all = threads;
        Thread me = Thread.currentThread();
        for (int i = 0; i < all.length; i++) {
            if (all[i] == me) {
                return i;
            }
        }
        return -1;
    }

    /** Runs {@code task} as owner {@code owner}: here when this is the owner's thread, else queued to it. */
    void execute(int owner, Runnable task) {
        if (threads[owner] == Thread.currentThread()) {
            task.run();
        } else {
            owners[owner].execute(task);
        }
    }

    /** Runs {@code task} on {@code owner} and waits for it; its exception is rethrown here. */
    void run(int owner, Runnable task) {
        Parts parts = new Parts(1);
        parts.run(this, owner, task);
        join(parts.done());
    }

    /** Waits for a request's parts; the first part's failure is rethrown as it was thrown. */
    static void join(CompletableFuture<Void> done) {
        try {
            done.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    /**
     * A request split over owners: done when every part has run, failed with the first part that failed, and never
     * before the last part has ended (a caller's buffers stay in use until then, so it may reuse them once done).
     */
    static final class Parts {
        private final AtomicInteger left;
        private final CompletableFuture<Void> done = new CompletableFuture<>();
        private final AtomicReference<Throwable> failed = new AtomicReference<>();

        Parts(int count) {
            left = new AtomicInteger(count);
            if (count == 0) {
                done.complete(null);
            }
        }

        void run(ShardOwners owners, int owner, Runnable part) {
            try {
                owners.execute(owner, () -> {
                    try {
                        part.run();
                    } catch (RuntimeException | Error e) {
                        failed.compareAndSet(null, e);
                    }
                    ended();
                });
            } catch (RuntimeException e) {
                // the owner took no task (stopped): the part failed without running
                failed.compareAndSet(null, e);
                ended();
            }
        }

        private void ended() {
            if (left.decrementAndGet() == 0) {
                Throwable first = failed.get();
                if (first == null) {
                    done.complete(null);
                } else {
                    done.completeExceptionally(first);
                }
            }
        }

        CompletableFuture<Void> done() {
            return done;
        }
    }
}
