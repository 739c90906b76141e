package org.fleet4j.pserver.transport;

import java.time.Duration;

/** Waiting for threads a transport or communicator made, all within one deadline, as their close must. */
public final class ThreadJoin {
    private ThreadJoin() {
    }

    /**
     * Waits until every thread of {@code threads} has ended or {@code patience} (for all of them together) has passed;
     * true if all have ended. An interrupt stops the wait, keeps the thread's interrupt status and returns false.
     */
    public static boolean all(Iterable<Thread> threads, Duration patience) {
        long deadline = System.nanoTime() + patience.toNanos();
        try {
            for (Thread t : threads) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !t.join(Duration.ofNanos(left))) {
                    return false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        return true;
    }
}
