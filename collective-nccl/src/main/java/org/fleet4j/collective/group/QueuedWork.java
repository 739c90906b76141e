package org.fleet4j.collective.group;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.Work;

/**
 * The {@link Work} of an operation queued on a group's {@link OpQueue}. Operations of a group run one at a time in issue order, on the group's progress
 * thread or, when the caller waits for an operation that is next in line, on the caller's thread (which saves two
 * thread hand-offs on small messages).
 */
public final class QueuedWork implements Work {
    /** How often a caller blocked behind another thread's operation checks whether its own may start. */
    private static final long RECHECK_NANOS = 200_000;
    private final String description;
    private final Runnable body;
    private final OpQueue queue;
    private final CompletableFuture<Void> result = new CompletableFuture<>();
    /** When the queue accepted it; the progress thread leaves it to a waiting caller for a moment after that. */
    long submittedNanos;
    /** Set once a caller waits for it: from then on only callers run it, never the progress thread. */
    volatile boolean awaited;

    QueuedWork(String description, Runnable body, OpQueue queue) {
        this.description = description;
        this.body = body;
        this.queue = queue;
    }

    @Override
    public boolean isDone() {
        return result.isDone();
    }

    /** The failure, once the operation has failed; empty while it runs or after success. */
    @Override
    public Optional<Throwable> error() {
        if (!result.isCompletedExceptionally()) {
            return Optional.empty();
        }
        try {
            result.join();
            return Optional.empty();
        } catch (Exception e) {
            return Optional.of(e.getCause() == null ? e : e.getCause());
        }
    }

    /**
     * Waits until the operation finishes and rethrows its failure. If this thread ends up running the operation
     * itself, the group's own timeout bounds it instead of {@code timeout}.
     */
    @Override
    public void await(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        awaited = true;
        try {
            while (!result.isDone()) {
                if (queue != null && queue.runNextIfFree(this)) {
                    continue; // ran an operation (ours or one issued before it)
                }
                // another thread runs the head; once it finishes, ours may be next for this thread to run
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new TimeoutException();
                }
                try {
                    result.get(Math.min(left, RECHECK_NANOS), TimeUnit.NANOSECONDS);
                } catch (TimeoutException stillRunning) {
                    // loop: the deadline check above decides
                }
            }
            result.get();
        } catch (TimeoutException e) {
            throw new CollectiveException("timed out after " + timeout.toMillis() + " ms waiting for " + description
                    + " (it is still pending; the group's own timeout will fail it if peers do not take part)");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof CollectiveException ce) {
                throw new CollectiveException(ce.getMessage(), ce);
            }
            throw new CollectiveException(description + " failed: " + cause, cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException("interrupted while waiting for " + description, e);
        } finally {
            if (!result.isDone()) {
                awaited = false; // nobody waits any more: the progress thread must start it
            }
        }
    }

    void run() {
        try {
            body.run();
            result.complete(null);
        } catch (Throwable t) {
            result.completeExceptionally(t);
        }
    }

    void fail(Throwable t) {
        result.completeExceptionally(t);
    }

    @Override
    public String toString() {
        return description + (isDone() ? (error().isPresent() ? " [failed]" : " [done]") : " [pending]");
    }
}
