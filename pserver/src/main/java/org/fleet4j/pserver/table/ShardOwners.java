package org.fleet4j.pserver.table;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Who runs a shard's table work: owner {@code i} is the only executor that ever touches the stripes and blocks given
 * to it, so updates need no lock (single writer) and a row is never read half-updated. By default each owner is an
 * {@link OwnerThread}; a transport whose network threads should own the shard's parts themselves (sharing-nothing)
 * hands its executors in with {@link TableShard#runOn}, each of which must run its tasks one at a time in order.
 */
public final class ShardOwners {
    private volatile Executor[] owners;

    ShardOwners(int count, String name) {
        Executor[] threads = new Executor[count];
        for (int i = 0; i < count; i++) {
            threads[i] = new OwnerThread(name + "-" + i);
        }
        owners = threads;
    }

    /** Owner threads by default: one per core, at most 4. */
    static int defaultCount() {
        return Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
    }

    public int size() {
        return owners.length;
    }

    Executor get(int owner) {
        return owners[owner];
    }

    void replace(List<? extends Executor> executors) {
        if (executors.size() != owners.length) {
            throw new IllegalArgumentException("the shard's parts are split over " + owners.length + " owners, but "
                    + executors.size() + " executors were given");
        }
        owners = executors.toArray(Executor[]::new);
    }

    /** Runs {@code task} on {@code owner} and waits for it; its exception is rethrown here. */
    void run(int owner, Runnable task) {
        Parts parts = new Parts(1);
        parts.run(get(owner), task);
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

    /** A request split over owners: done when every part has run, failed with the first part that failed. */
    static final class Parts {
        private final AtomicInteger left;
        private final CompletableFuture<Void> done = new CompletableFuture<>();

        Parts(int count) {
            left = new AtomicInteger(count);
            if (count == 0) {
                done.complete(null);
            }
        }

        void run(Executor owner, Runnable part) {
            owner.execute(() -> {
                try {
                    part.run();
                } catch (RuntimeException | Error e) {
                    done.completeExceptionally(e);
                }
                if (left.decrementAndGet() == 0) {
                    done.complete(null);
                }
            });
        }

        CompletableFuture<Void> done() {
            return done;
        }
    }
}
