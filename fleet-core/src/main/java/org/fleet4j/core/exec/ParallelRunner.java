package org.fleet4j.core.exec;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs one iteration of a plan on several threads: the caller and {@code threads - 1} workers take ready ops (all
 * the ops they wait for are done) lowest program index first, so with few threads the order stays close to the
 * program's and an allreduce placed early starts early. The ops of a conditional region whose condition is false
 * are finished without running. After a failure no further op starts; the caller waits for those running, then
 * throws the first failure.
 */
final class ParallelRunner implements AutoCloseable {
    /** Runs one op's kernel (with the executor's observers and error messages). */
    interface StepBody {
        void run(Plan.Step step);
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final List<Thread> workers = new ArrayList<>();
    private Round round;
    private boolean closed;

    /** One iteration's progress. Guarded by the lock, except {@code skip}, written before the op's successors become ready. */
    private static final class Round {
        final Plan plan;
        final DependencyGraph graph;
        final StepBody body;
        final int[] waitingFor;
        final boolean[] skip;
        final PriorityQueue<Integer> ready = new PriorityQueue<>();
        int remaining;
        int running;
        Throwable failure;

        Round(Plan plan, DependencyGraph graph, StepBody body) {
            this.plan = plan;
            this.graph = graph;
            this.body = body;
            this.waitingFor = graph.predecessors.clone();
            this.skip = new boolean[plan.steps.length];
            this.remaining = plan.steps.length;
            for (int i = 0; i < waitingFor.length; i++) {
                if (waitingFor[i] == 0) {
                    ready.add(i);
                }
            }
        }
    }

    ParallelRunner(int threads) {
        for (int k = 1; k < threads; k++) {
            workers.add(Thread.ofPlatform().daemon().name("fleet4j-executor-" + k).start(this::workerLoop));
        }
    }

    /** Runs every op of the plan once, in an order the graph allows; rethrows the first op's failure. */
    void run(Plan plan, DependencyGraph graph, StepBody body) {
        Round r = new Round(plan, graph, body);
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the executor is closed; create a new one");
            }
            round = r;
            wakeHelpers(r);
            work(r, true);
            round = null;
        } finally {
            lock.unlock();
        }
        switch (r.failure) {
            case null -> { }
            case RuntimeException e -> throw e;
            case Error e -> throw e;
            default -> throw new ExecutionException(r.failure.getMessage(), r.failure);
        }
    }

    private void workerLoop() {
        lock.lock();
        try {
            while (!closed) {
                Round r = round;
                if (r == null) {
                    changed.awaitUninterruptibly();
                } else {
                    work(r, false);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Takes and runs ready ops until the round is over (for the caller) or replaced or closed (for a worker). Holds the lock. */
    private void work(Round r, boolean caller) {
        while (true) {
            if (caller ? r.remaining == 0 || r.failure != null && r.running == 0 : closed || round != r) {
                return;
            }
            Integer next = r.failure == null ? r.ready.poll() : null;
            if (next == null) {
                if (caller && r.running == 0 && r.failure == null) {
                    // nothing runs, nothing is ready, yet ops remain: only a cycle in the graph does that
                    r.failure = new ExecutionException("the parallel executor found no runnable op while " + r.remaining
                            + " of " + r.plan.steps.length + " wait; please report this program");
                } else {
                    changed.awaitUninterruptibly();
                }
                continue;
            }
            r.running++;
            lock.unlock();
            Throwable error = null;
            try {
                execute(r, next);
            } catch (Throwable t) {
                error = t;
            } finally {
                lock.lock();
            }
            r.running--;
            if (error != null) {
                if (r.failure == null) {
                    r.failure = error;
                }
            } else {
                r.remaining--;
                for (int s : r.graph.successors[next]) {
                    if (--r.waitingFor[s] == 0) {
                        r.ready.add(s);
                    }
                }
            }
            if (error != null || r.remaining == 0) {
                changed.signalAll();
            } else {
                wakeHelpers(r);
            }
        }
    }

    /**
     * Wakes one waiting thread per ready op beyond the one this thread takes next: a chain of ops stays on one
     * thread, and no thread is woken (a switch of cores, costly on a busy machine) to find nothing to do.
     */
    private void wakeHelpers(Round r) {
        for (int k = 1; k < r.ready.size(); k++) {
            changed.signal();
        }
    }

    private static void execute(Round r, int i) {
        if (r.skip[i]) {
            return;
        }
        Plan.Step step = r.plan.steps[i];
        if (step.skipTo() >= 0 && !Executor.isTrue(r.plan.frame[step.condSlot()])) {
            for (int j = i + 1; j < step.skipTo(); j++) {
                r.skip[j] = true;
            }
            return;
        }
        r.body.run(step);
    }

    /** Stops the workers; a run in progress finishes first. */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
