package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.files.StrategyFormat;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.junit.jupiter.api.Test;

/** Each executor knob of a strategy file reaches the executor's options. */
class ExecutionSettingsTest {
    private static ExecutorOptions of(String yaml, World world) {
        return ExecutionSettings.of(EffectiveStrategy.resolve(DistributedStrategy.parse(yaml, StrategyFormat.YAML, "s.yaml"),
                world));
    }

    @Test
    void everyExecutorKnobOfTheStrategyBecomesAnOption() {
        assertEquals(new ExecutorOptions(3, true, false, 5, 2), of("""
                thread_num: 3
                build_strategy:
                  enable_sequential_execution: true
                  enable_backward_optimizer_op_deps: false
                execution_strategy:
                  num_iteration_per_drop_scope: 5
                  num_iteration_per_run: 2
                """, new World(1, 1, "cpu")));
    }

    @Test
    void theDefaultsOnTwoRanksRunOnOneThreadOnCpuAndDropEveryTenIterations() {
        assertEquals(new ExecutorOptions(1, false, true, 10, 1), of("mode: collective\n", new World(1, 2, "cpu")),
                "on cpu the collective runs on the group's own thread: no executor thread is added for it");
        assertEquals(new ExecutorOptions(2, false, true, 10, 1), of("mode: collective\n", new World(1, 2, "gpu")),
                "sync_nccl_allreduce (on by default) raises num_threads to nccl_comm_num + 1 on gpu");
        assertEquals(new ExecutorOptions(1, false, true, 10, 1), of("sync_nccl_allreduce: false\n", new World(1, 2, "gpu")));
    }
}
