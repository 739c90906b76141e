package org.fleet4j.pserver.compile;

import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * The strategy's {@code a_sync_configs} as a worker's communicator reads them: how many steps geo trains locally
 * ({@code kSteps}), how many queued gradients of one variable async merges into one send ({@code maxMergeVarNum}), the
 * length of each variable's send queue ({@code sendQueueSize}), whether dense values are received on a thread of their
 * own ({@code independentRecvThread}), the sender threads ({@code threadPoolSize}), how many 10 ms waits for more
 * gradients a sender makes before sending a partial merge ({@code sendWaitTimes}), and whether workers wait for every
 * server before their first step ({@code launchBarrier}, Paddle's default true; with false a worker connects to a
 * server at its first call to it, retrying until that call's deadline).
 */
public record CommunicatorSettings(int kSteps, int maxMergeVarNum, int sendQueueSize, boolean independentRecvThread,
                                   int threadPoolSize, int sendWaitTimes, boolean launchBarrier) {
    /** Paddle's interval between a sender's looks at an empty queue, one "send wait time". */
    public static final int WAIT_MILLIS = 10;

    public CommunicatorSettings {
        if (maxMergeVarNum < 1 || sendQueueSize < 1 || threadPoolSize < 1 || sendWaitTimes < 1) {
            throw new IllegalArgumentException("communicator settings must be at least 1: max_merge_var_num "
                    + maxMergeVarNum + ", send_queue_size " + sendQueueSize + ", thread_pool_size " + threadPoolSize
                    + ", send_wait_times " + sendWaitTimes);
        }
    }

    /** The settings of {@code strategy}. */
    public static CommunicatorSettings of(DistributedStrategy strategy) {
        return new CommunicatorSettings(strategy.get(StrategySchema.ASYNC_K_STEPS),
                strategy.get(StrategySchema.ASYNC_MAX_MERGE_VAR_NUM), strategy.get(StrategySchema.ASYNC_SEND_QUEUE_SIZE),
                strategy.get(StrategySchema.ASYNC_INDEPENDENT_RECV_THREAD),
                strategy.get(StrategySchema.ASYNC_THREAD_POOL_SIZE), strategy.get(StrategySchema.ASYNC_SEND_WAIT_TIMES),
                strategy.get(StrategySchema.ASYNC_LAUNCH_BARRIER));
    }

    /** What the worker's communicator does in {@code mode}, with the settings it reads, for the printed plan. */
    public String describe(PsMode mode) {
        String async = "gradients queue per variable (send_queue_size " + sendQueueSize + "); " + threadPoolSize
                + " sender thread(s) (thread_pool_size) each sum up to " + maxMergeVarNum
                + " queued gradients of a variable into one send (max_merge_var_num), waiting up to " + sendWaitTimes
                + " x " + WAIT_MILLIS + " ms for more (send_wait_times)";
        String modeText = switch (mode) {
            case SYNC -> "communicator: sync: each push returns once its servers took it; the servers apply one"
                    + " averaged update per step; send_barrier waits for every worker";
            case ASYNC -> "communicator: async: " + async + "; dense values are received "
                    + (independentRecvThread ? "on a thread of their own (independent_recv_thread true)"
                    : "after each send of the variable (independent_recv_thread false)")
                    + " and pulls read them; sparse rows are pulled when asked; no barrier; the servers apply each"
                    + " send as it comes";
            case HALF_ASYNC -> "communicator: half-async: " + async + "; send_barrier waits until this worker's"
                    + " sends were applied and every worker came; pulls then read the servers; the servers apply each"
                    + " send as it comes";
            case GEO -> "communicator: geo: every worker trains local copies with the tables' optimizers and every "
                    + kSteps + " steps (k_steps) pushes (local - last synced) / workers for the dense tables and the"
                    + " sparse rows it touched, then pulls their fresh values; up to " + threadPoolSize
                    + " tables at once (thread_pool_size); the servers add the deltas (no optimizer)";
        };
        return modeText + "\nlaunch_barrier " + launchBarrier + (launchBarrier
                ? ": Fleet.initWorker connects to every server, waiting for each, before the first step"
                : ": Fleet.initWorker waits for no server; a worker connects to a server at its first call to it,"
                        + " retrying until that call's deadline");
    }
}
