package org.fleet4j.core.exec;

/**
 * How an {@link Executor} runs programs (Paddle's execution and build strategy knobs that concern the executor).
 *
 * @param numThreads                 threads that run ops: 1 runs them in program order on the caller's thread; more
 *                                   run each op as soon as the ops it depends on are done, on the caller and
 *                                   {@code numThreads - 1} workers
 * @param sequentialExecution        run ops in program order even when {@code numThreads > 1}
 * @param backwardOptimizerOpDeps    with several threads, no parameter update starts before every op in front of
 *                                   the first update (backward and its allreduces) is done, so early updates never
 *                                   take a thread from the rest of backward
 * @param iterationsPerDropScope     every this many iterations the temporaries are released (their buffers go back
 *                                   to the allocator and are made anew by the next iteration); 0 keeps them
 * @param iterationsPerRun           iterations of the program per {@code run(program, scope, feed, fetch)} call,
 *                                   all with the same feed; the fetched values are those of the last. A startup
 *                                   program, run by {@code run(program, scope)}, runs once
 */
public record ExecutorOptions(int numThreads, boolean sequentialExecution, boolean backwardOptimizerOpDeps,
                              int iterationsPerDropScope, int iterationsPerRun) {
    public ExecutorOptions {
        if (numThreads < 1) {
            throw new IllegalArgumentException("executor numThreads must be at least 1, is " + numThreads);
        }
        if (iterationsPerDropScope < 0) {
            throw new IllegalArgumentException("executor iterationsPerDropScope must be 0 (never) or more, is "
                    + iterationsPerDropScope);
        }
        if (iterationsPerRun < 1) {
            throw new IllegalArgumentException("executor iterationsPerRun must be at least 1, is " + iterationsPerRun);
        }
    }

    /** One thread, program order, temporaries kept, one iteration per run: what {@code new Executor()} does. */
    public static ExecutorOptions defaults() {
        return new ExecutorOptions(1, false, true, 0, 1);
    }

    public ExecutorOptions withNumThreads(int n) {
        return new ExecutorOptions(n, sequentialExecution, backwardOptimizerOpDeps, iterationsPerDropScope, iterationsPerRun);
    }

    public ExecutorOptions withSequentialExecution(boolean on) {
        return new ExecutorOptions(numThreads, on, backwardOptimizerOpDeps, iterationsPerDropScope, iterationsPerRun);
    }

    public ExecutorOptions withBackwardOptimizerOpDeps(boolean on) {
        return new ExecutorOptions(numThreads, sequentialExecution, on, iterationsPerDropScope, iterationsPerRun);
    }

    public ExecutorOptions withIterationsPerDropScope(int n) {
        return new ExecutorOptions(numThreads, sequentialExecution, backwardOptimizerOpDeps, n, iterationsPerRun);
    }

    public ExecutorOptions withIterationsPerRun(int n) {
        return new ExecutorOptions(numThreads, sequentialExecution, backwardOptimizerOpDeps, iterationsPerDropScope, n);
    }

    /** Whether ops run by dependencies on several threads rather than in program order on one. */
    public boolean parallel() {
        return numThreads > 1 && !sequentialExecution;
    }
}
