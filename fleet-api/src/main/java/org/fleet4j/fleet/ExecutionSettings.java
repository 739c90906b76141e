package org.fleet4j.fleet;

import java.util.List;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.schema.KnobUse;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * The executor knobs of a strategy as {@link ExecutorOptions}: {@code execution_strategy.num_threads} (thread_num),
 * {@code build_strategy.enable_sequential_execution}, {@code build_strategy.enable_backward_optimizer_op_deps},
 * {@code execution_strategy.num_iteration_per_drop_scope} and {@code execution_strategy.num_iteration_per_run}.
 * {@code sync_nccl_allreduce} is the compiler's (the overlap pass), not the executor's.
 */
public final class ExecutionSettings {
    /** The knobs {@link #of} reads. */
    static final List<KnobUse> KNOBS = List.of(KnobUse.any(StrategySchema.EXEC_NUM_THREADS),
            KnobUse.any(StrategySchema.BUILD_ENABLE_SEQUENTIAL_EXECUTION),
            KnobUse.any(StrategySchema.BUILD_ENABLE_BACKWARD_OPTIMIZER_OP_DEPS),
            KnobUse.any(StrategySchema.EXEC_NUM_ITERATION_PER_DROP_SCOPE),
            KnobUse.any(StrategySchema.EXEC_NUM_ITERATION_PER_RUN));

    private ExecutionSettings() {
    }

    public static ExecutorOptions of(EffectiveStrategy strategy) {
        return new ExecutorOptions(strategy.get(StrategySchema.EXEC_NUM_THREADS),
                strategy.get(StrategySchema.BUILD_ENABLE_SEQUENTIAL_EXECUTION),
                strategy.get(StrategySchema.BUILD_ENABLE_BACKWARD_OPTIMIZER_OP_DEPS),
                strategy.get(StrategySchema.EXEC_NUM_ITERATION_PER_DROP_SCOPE),
                strategy.get(StrategySchema.EXEC_NUM_ITERATION_PER_RUN));
    }

    /** An executor that runs programs as the job's effective strategy says, its kernels on the job's rings. */
    public static Executor executor(Fleet fleet) {
        return new Executor(of(fleet.strategy()), fleet.execContext());
    }
}
