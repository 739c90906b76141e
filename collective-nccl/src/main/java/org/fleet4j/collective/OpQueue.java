package org.fleet4j.collective;

import java.util.ArrayDeque;
import java.util.concurrent.locks.LockSupport;

/** Runs a group's operations strictly one after another in issue order, on a progress thread or a waiting caller. */
final class OpQueue implements AutoCloseable {
    private final ArrayDeque<Work> pending = new ArrayDeque<>();
    private final Thread progress;
    private boolean headRunning;
    private volatile boolean closed;

    OpQueue(String groupName) {
        progress = Thread.ofPlatform().daemon().name("fleet4j-" + groupName + "-progress").unstarted(this::progressLoop);
        progress.start();
    }

    void submit(Work w) {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("group is closed; cannot issue " + w);
            }
            pending.add(w);
        }
        LockSupport.unpark(progress);
    }

    /** Runs the head operation if nobody is running one and {@code target} is still queued; true if it ran one. */
    boolean runNextIfFree(Work target) {
        Work head;
        synchronized (this) {
            if (headRunning || pending.isEmpty() || !pending.contains(target)) {
                return false;
            }
            headRunning = true;
            head = pending.peek();
        }
        runHead(head);
        return true;
    }

    private void runHead(Work head) {
        head.run();
        boolean more;
        synchronized (this) {
            pending.poll();
            headRunning = false;
            more = !pending.isEmpty();
        }
        if (more) {
            LockSupport.unpark(progress);
        }
    }

    private void progressLoop() {
        while (!closed) {
            Work head = null;
            synchronized (this) {
                if (!headRunning && !pending.isEmpty()) {
                    headRunning = true;
                    head = pending.peek();
                }
            }
            if (head != null) {
                runHead(head);
            } else {
                LockSupport.park(this);
            }
        }
    }

    /** Stops the progress thread; operations not yet started fail with {@code reason}. */
    void close(CollectiveException reason) {
        synchronized (this) {
            closed = true;
            int skip = headRunning ? 1 : 0;
            for (Work w : pending) {
                if (skip-- <= 0) {
                    w.fail(reason);
                }
            }
        }
        LockSupport.unpark(progress);
    }

    @Override
    public void close() {
        close(new CollectiveException("group closed before the operation started"));
    }
}
