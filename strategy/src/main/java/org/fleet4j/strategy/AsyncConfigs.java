package org.fleet4j.strategy;

import org.fleet4j.strategy.schema.StrategySchema;

/** The a_sync_configs group of a {@link DistributedStrategy}: parameter-server communicator settings (used when mode is ps). Setters write through to the strategy. */
public final class AsyncConfigs {
    private final DistributedStrategy strategy;

    AsyncConfigs(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** k > 0 is GEO-SGD (needs a_sync: true): workers train local copies and exchange deltas every k steps; -1 and 0 leave the mode to a_sync and runtime_split_send_recv. */
    public AsyncConfigs kSteps(int value) {
        strategy.set(StrategySchema.ASYNC_K_STEPS, value);
        return this;
    }

    public int kSteps() {
        return strategy.get(StrategySchema.ASYNC_K_STEPS);
    }

    /** Async and half-async: how many queued gradients of one variable the communicator sums into one send. */
    public AsyncConfigs maxMergeVarNum(int value) {
        strategy.set(StrategySchema.ASYNC_MAX_MERGE_VAR_NUM, value);
        return this;
    }

    public int maxMergeVarNum() {
        return strategy.get(StrategySchema.ASYNC_MAX_MERGE_VAR_NUM);
    }

    /** Async and half-async: length of each variable's queue of gradients waiting to be sent; a full queue holds the training step. */
    public AsyncConfigs sendQueueSize(int value) {
        strategy.set(StrategySchema.ASYNC_SEND_QUEUE_SIZE, value);
        return this;
    }

    public int sendQueueSize() {
        return strategy.get(StrategySchema.ASYNC_SEND_QUEUE_SIZE);
    }

    /** Async: receive dense parameters on a thread of their own instead of after each send of the parameter. */
    public AsyncConfigs independentRecvThread(boolean value) {
        strategy.set(StrategySchema.ASYNC_INDEPENDENT_RECV_THREAD, value);
        return this;
    }

    public boolean independentRecvThread() {
        return strategy.get(StrategySchema.ASYNC_INDEPENDENT_RECV_THREAD);
    }

    /** Worker threads that send gradients (async, half-async) or exchange tables (geo). */
    public AsyncConfigs threadPoolSize(int value) {
        strategy.set(StrategySchema.ASYNC_THREAD_POOL_SIZE, value);
        return this;
    }

    public int threadPoolSize() {
        return strategy.get(StrategySchema.ASYNC_THREAD_POOL_SIZE);
    }

    /** Async and half-async: how many 10 ms waits for more gradients a sender makes before sending a partial merge. */
    public AsyncConfigs sendWaitTimes(int value) {
        strategy.set(StrategySchema.ASYNC_SEND_WAIT_TIMES, value);
        return this;
    }

    public int sendWaitTimes() {
        return strategy.get(StrategySchema.ASYNC_SEND_WAIT_TIMES);
    }

    /** With a_sync true and k_steps <= 0: true is async (no barrier), false half-async (a barrier per step), as Paddle's DistributeTranspiler chooses. */
    public AsyncConfigs runtimeSplitSendRecv(boolean value) {
        strategy.set(StrategySchema.ASYNC_RUNTIME_SPLIT_SEND_RECV, value);
        return this;
    }

    public boolean runtimeSplitSendRecv() {
        return strategy.get(StrategySchema.ASYNC_RUNTIME_SPLIT_SEND_RECV);
    }

    /** Workers wait until every server answers before the first step; false is not supported. */
    public AsyncConfigs launchBarrier(boolean value) {
        strategy.set(StrategySchema.ASYNC_LAUNCH_BARRIER, value);
        return this;
    }

    public boolean launchBarrier() {
        return strategy.get(StrategySchema.ASYNC_LAUNCH_BARRIER);
    }
}
