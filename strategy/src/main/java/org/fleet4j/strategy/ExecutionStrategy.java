package org.fleet4j.strategy;

import org.fleet4j.strategy.schema.StrategySchema;

/** The execution_strategy group of a {@link DistributedStrategy}: how the executor runs the compiled program. Setters write through to the strategy. */
public final class ExecutionStrategy {
    private final DistributedStrategy strategy;

    ExecutionStrategy(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** Threads of the executor that run ops. */
    public ExecutionStrategy numThreads(int value) {
        strategy.set(StrategySchema.EXEC_NUM_THREADS, value);
        return this;
    }

    public int numThreads() {
        return strategy.get(StrategySchema.EXEC_NUM_THREADS);
    }

    /** Steps between drops of the temporary variables' scope. */
    public ExecutionStrategy numIterationPerDropScope(int value) {
        strategy.set(StrategySchema.EXEC_NUM_ITERATION_PER_DROP_SCOPE, value);
        return this;
    }

    public int numIterationPerDropScope() {
        return strategy.get(StrategySchema.EXEC_NUM_ITERATION_PER_DROP_SCOPE);
    }

    /** Steps run by one call of the executor. */
    public ExecutionStrategy numIterationPerRun(int value) {
        strategy.set(StrategySchema.EXEC_NUM_ITERATION_PER_RUN, value);
        return this;
    }

    public int numIterationPerRun() {
        return strategy.get(StrategySchema.EXEC_NUM_ITERATION_PER_RUN);
    }

    /** Threads meet at a barrier after each step (parameter-server mode). */
    public ExecutionStrategy useThreadBarrier(boolean value) {
        strategy.set(StrategySchema.EXEC_USE_THREAD_BARRIER, value);
        return this;
    }

    public boolean useThreadBarrier() {
        return strategy.get(StrategySchema.EXEC_USE_THREAD_BARRIER);
    }
}
