package org.fleet4j.strategy;

/** The a_sync_configs group of a {@link DistributedStrategy}: parameter-server communicator settings (used when mode is ps). Setters write through to the strategy. */
public final class AsyncConfigs {
    private final DistributedStrategy strategy;

    AsyncConfigs(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** -1 leaves the mode to a_sync, 0 is fully asynchronous, k > 0 is GEO-SGD (local training, sync every k steps). */
    public AsyncConfigs kSteps(int value) {
        strategy.set(StrategySchema.ASYNC_K_STEPS, value);
        return this;
    }

    public int kSteps() {
        return strategy.get(StrategySchema.ASYNC_K_STEPS);
    }

    /** How many gradients of one variable the communicator merges before one send. */
    public AsyncConfigs maxMergeVarNum(int value) {
        strategy.set(StrategySchema.ASYNC_MAX_MERGE_VAR_NUM, value);
        return this;
    }

    public int maxMergeVarNum() {
        return strategy.get(StrategySchema.ASYNC_MAX_MERGE_VAR_NUM);
    }

    /** Length of the per-variable queue of gradients waiting to be sent. */
    public AsyncConfigs sendQueueSize(int value) {
        strategy.set(StrategySchema.ASYNC_SEND_QUEUE_SIZE, value);
        return this;
    }

    public int sendQueueSize() {
        return strategy.get(StrategySchema.ASYNC_SEND_QUEUE_SIZE);
    }

    /** Receive parameters on a thread of their own instead of after each send. */
    public AsyncConfigs independentRecvThread(boolean value) {
        strategy.set(StrategySchema.ASYNC_INDEPENDENT_RECV_THREAD, value);
        return this;
    }

    public boolean independentRecvThread() {
        return strategy.get(StrategySchema.ASYNC_INDEPENDENT_RECV_THREAD);
    }

    /** Threads that send and receive on the worker side. */
    public AsyncConfigs threadPoolSize(int value) {
        strategy.set(StrategySchema.ASYNC_THREAD_POOL_SIZE, value);
        return this;
    }

    public int threadPoolSize() {
        return strategy.get(StrategySchema.ASYNC_THREAD_POOL_SIZE);
    }

    /** How many times the sender waits for the queue to fill before sending a partial merge. */
    public AsyncConfigs sendWaitTimes(int value) {
        strategy.set(StrategySchema.ASYNC_SEND_WAIT_TIMES, value);
        return this;
    }

    public int sendWaitTimes() {
        return strategy.get(StrategySchema.ASYNC_SEND_WAIT_TIMES);
    }

    /** Split variables into blocks across servers at run time rather than when compiling. */
    public AsyncConfigs runtimeSplitSendRecv(boolean value) {
        strategy.set(StrategySchema.ASYNC_RUNTIME_SPLIT_SEND_RECV, value);
        return this;
    }

    public boolean runtimeSplitSendRecv() {
        return strategy.get(StrategySchema.ASYNC_RUNTIME_SPLIT_SEND_RECV);
    }

    /** Workers wait until every server is up before the first step. */
    public AsyncConfigs launchBarrier(boolean value) {
        strategy.set(StrategySchema.ASYNC_LAUNCH_BARRIER, value);
        return this;
    }

    public boolean launchBarrier() {
        return strategy.get(StrategySchema.ASYNC_LAUNCH_BARRIER);
    }
}
