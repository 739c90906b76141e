package org.fleet4j.strategy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.fleet4j.strategy.files.StrategyFormat;
import org.fleet4j.strategy.rules.Change;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.StrategyWarning;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.Test;

/** Each rule that adapts a strategy to its world, and each warning the dry run gives. */
class EffectiveStrategyTest {
    private static final World ONE_CPU = new World(1, 1, "cpu");
    private static final World ONE_NODE_FOUR_GPUS = new World(1, 4, "gpu");
    private static final World TWO_NODES_FOUR_GPUS = new World(2, 4, "gpu");

    private static List<String> changes(EffectiveStrategy e) {
        return e.changes().stream().map(Change::toString).toList();
    }

    private static List<String> warnings(EffectiveStrategy e) {
        return e.warnings().stream().map(StrategyWarning::toString).toList();
    }

    @Test
    void defaultsOnSeveralWorkersOnlyRaiseTheThreadsForTheSynchronousAllreduce() {
        EffectiveStrategy e = EffectiveStrategy.resolve(new DistributedStrategy(), TWO_NODES_FOUR_GPUS);
        assertEquals(List.of("execution_strategy.num_threads: 1 -> 2 (sync_nccl_allreduce blocks one thread per communicator"
                + " while it waits, so the executor needs nccl_comm_num + 1 = 2 threads)"), changes(e));
        assertEquals(List.of(), e.warnings());
        assertEquals(new DistributedStrategy().snapshot().values().size(), e.snapshot().values().size());
    }

    @Test
    void aSingleWorkerUsesOneCommunicatorAndNoFusion() {
        EffectiveStrategy e = EffectiveStrategy.resolve(new DistributedStrategy().ncclCommNum(4), ONE_CPU);
        assertEquals(List.of(
                "nccl_comm_num: 4 -> 1 (a single worker has nobody to allreduce with, so one communicator is enough)",
                "fuse_all_reduce_ops: true -> false (a single worker runs no allreduce, so there is nothing to fuse)"),
                changes(e));
        assertEquals(1, e.get(StrategySchema.NCCL_COMM_NUM));
        assertFalse(e.get(StrategySchema.FUSE_ALL_REDUCE_OPS));
        assertEquals(1, e.get(StrategySchema.EXEC_NUM_THREADS), "no allreduce, so no thread is raised for one");
    }

    @Test
    void hierarchicalAllreduceIsOffOnASingleNode() {
        EffectiveStrategy e = EffectiveStrategy.resolve(new DistributedStrategy().useHierarchicalAllreduce(true), ONE_NODE_FOUR_GPUS);
        assertEquals("use_hierarchical_allreduce: true -> false (all ranks are on one node, so there is no inter-node stage)",
                changes(e).getFirst());
        assertFalse(e.get(StrategySchema.USE_HIERARCHICAL_ALLREDUCE));
    }

    @Test
    void hierarchicalAllreduceIsOffWithOneRankPerNode() {
        EffectiveStrategy e = EffectiveStrategy.resolve(new DistributedStrategy().useHierarchicalAllreduce(true), new World(4, 1, "gpu"));
        assertEquals("use_hierarchical_allreduce: true -> false (one rank per node leaves the intra-node stage nothing to reduce)",
                changes(e).getFirst());
    }

    @Test
    void hierarchicalInterNranksOfOneMeansTheRanksPerNode() {
        EffectiveStrategy e = EffectiveStrategy.resolve(new DistributedStrategy().useHierarchicalAllreduce(true), TWO_NODES_FOUR_GPUS);
        assertEquals("hierarchical_allreduce_inter_nranks: 1 -> 4 (1 stands for the ranks per node, 4)", changes(e).getFirst());
        assertTrue(e.get(StrategySchema.USE_HIERARCHICAL_ALLREDUCE));
        assertEquals(4, e.get(StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS));
    }

    @Test
    void hierarchicalInterNranksMustDivideTheWorldAcrossNodes() {
        DistributedStrategy s = DistributedStrategy.parse("use_hierarchical_allreduce: true\nhierarchical_allreduce_inter_nranks: 3\n",
                StrategyFormat.YAML, "s.yaml");
        StrategyException e = assertThrows(StrategyException.class, () -> EffectiveStrategy.resolve(s, TWO_NODES_FOUR_GPUS));
        assertEquals("s.yaml:2: hierarchical_allreduce_inter_nranks: 3 does not divide the world size 8 (2 nodes x 4 ranks),"
                + " so the inner groups cannot tile the ranks; use a divisor of 8 such as 4 (the ranks per node)", e.getMessage());
        DistributedStrategy two = new DistributedStrategy().useHierarchicalAllreduce(true).hierarchicalAllreduceInterNranks(2);
        assertEquals(2, EffectiveStrategy.resolve(two, TWO_NODES_FOUR_GPUS).get(StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS));
        assertFalse(EffectiveStrategy.resolve(s, ONE_NODE_FOUR_GPUS).get(StrategySchema.USE_HIERARCHICAL_ALLREDUCE),
                "on one node the setting is switched off rather than refused");
    }

    @Test
    void synchronousAllreduceNeedsOneThreadMoreThanItHasCommunicators() {
        EffectiveStrategy raised = EffectiveStrategy.resolve(new DistributedStrategy().ncclCommNum(3), ONE_NODE_FOUR_GPUS);
        assertEquals(4, raised.get(StrategySchema.EXEC_NUM_THREADS));
        assertEquals("rule", raised.source(StrategySchema.EXEC_NUM_THREADS));

        EffectiveStrategy enough = EffectiveStrategy.resolve(new DistributedStrategy().ncclCommNum(3).threadNum(8), ONE_NODE_FOUR_GPUS);
        assertEquals(8, enough.get(StrategySchema.EXEC_NUM_THREADS));
        assertEquals(List.of(), enough.changes());

        EffectiveStrategy async = EffectiveStrategy.resolve(new DistributedStrategy().ncclCommNum(3).syncNcclAllreduce(false), ONE_NODE_FOUR_GPUS);
        assertEquals(1, async.get(StrategySchema.EXEC_NUM_THREADS));

        EffectiveStrategy cpu = EffectiveStrategy.resolve(new DistributedStrategy().ncclCommNum(3), new World(1, 4, "cpu"));
        assertEquals(1, cpu.get(StrategySchema.EXEC_NUM_THREADS), "on cpu the collective needs no executor thread of its own");
        assertEquals(List.of(), cpu.changes());
    }

    @Test
    void syncBatchNormForcesOneCommunicatorOneThreadAFlatAllreduceAndUnfusedBatchNorms() {
        DistributedStrategy s = new DistributedStrategy().syncBatchNorm(true).ncclCommNum(2).threadNum(4).useHierarchicalAllreduce(true)
                .set(StrategySchema.BUILD_FUSE_BN_ACT_OPS, true);
        EffectiveStrategy e = EffectiveStrategy.resolve(s, TWO_NODES_FOUR_GPUS);
        assertEquals(List.of(
                "nccl_comm_num: 2 -> 1 (sync_batch_norm needs every rank to issue its allreduces in the same order, on one communicator)",
                "execution_strategy.num_threads: 4 -> 1 (sync_batch_norm hangs when several executor threads order its allreduces"
                        + " differently on each rank)",
                "use_hierarchical_allreduce: true -> false (sync_batch_norm allreduces its statistics on one flat communicator)",
                "build_strategy.fuse_bn_act_ops: true -> false (sync_batch_norm synchronises batch_norm ops, and a"
                        + " fused_bn_activation would normalise over its own rank's batch only)"),
                changes(e));
        assertEquals(1, e.get(StrategySchema.EXEC_NUM_THREADS), "sync_nccl_allreduce does not raise it back");
    }

    @Test
    void rulesLeaveTheRequestedStrategyAlone() {
        DistributedStrategy s = new DistributedStrategy().ncclCommNum(4);
        EffectiveStrategy.resolve(s, ONE_CPU);
        assertEquals(4, s.ncclCommNum());
    }

    @Test
    void collectiveRulesDoNotTouchParameterServerJobs() {
        DistributedStrategy ps = new DistributedStrategy().mode(Mode.PS);
        assertEquals(List.of(), EffectiveStrategy.resolve(ps, ONE_CPU).changes());
        StrategyException e = assertThrows(StrategyException.class,
                () -> EffectiveStrategy.resolve(new DistributedStrategy().mode(Mode.PS).ncclCommNum(2), ONE_CPU));
        assertEquals("nccl_comm_num applies only to mode collective, but mode is ps (set in code); set mode: collective"
                + " or remove it", e.getMessage());
    }

    @Test
    void gpuOnlyKnobsAreReportedAsIgnoredOnCpu() {
        DistributedStrategy s = new DistributedStrategy().cudnnExhaustiveSearch(false).convWorkspaceSizeLimit(1024);
        assertEquals(List.of(
                "cudnn_exhaustive_search = false: ignored on cpu: only cuDNN on GPUs reads it, and this world runs on cpu",
                "conv_workspace_size_limit = 1024: ignored on cpu: only cuDNN on GPUs reads it, and this world runs on cpu"),
                warnings(EffectiveStrategy.resolve(s, new World(1, 2, "cpu"))));
        assertEquals(List.of(
                "cudnn_exhaustive_search = false: not in effect yet: accepted and recorded, but the Fleet4J runtime does not act on it yet",
                "conv_workspace_size_limit = 1024: not in effect yet: accepted and recorded, but the Fleet4J runtime does not act on it yet"),
                warnings(EffectiveStrategy.resolve(s, ONE_NODE_FOUR_GPUS)));
    }

    /** Which knobs are honoured is declared by the runtime's modules (fleet-api's HonouredKnobsTest checks those). */
    @Test
    void knobsTheRuntimeDoesNotHonourYetAreReportedWhenChanged() {
        DistributedStrategy s = new DistributedStrategy().lars(true).fuseAllReduceOps(true);
        assertEquals(List.of("lars = true: not in effect yet: accepted and recorded, but the Fleet4J runtime"
                + " does not act on it yet"), warnings(EffectiveStrategy.resolve(s, TWO_NODES_FOUR_GPUS)),
                "set to its default (fuse_all_reduce_ops): no warning");
        assertEquals(List.of("mode = ps: not in effect yet: accepted and recorded, but the Fleet4J runtime does not act on it yet"),
                warnings(EffectiveStrategy.resolve(new DistributedStrategy().mode(Mode.PS), ONE_CPU)));
    }

    @Test
    void settingsWhoseSwitchIsOffHaveNoEffect() {
        DistributedStrategy s = new DistributedStrategy().ampConfigs(c -> c.initLossScaling(1024)).protocol(Protocol.STAR_SERVER);
        assertEquals(List.of(
                "amp_configs.init_loss_scaling = 1024.0: no effect: amp is off, so the settings of amp_configs are not used",
                "protocol = star_server: not in effect yet: accepted and recorded, but the Fleet4J runtime does not act on it yet",
                "protocol = star_server: no effect: only parameter-server mode (mode: ps) uses it, and mode is collective"),
                warnings(EffectiveStrategy.resolve(s, ONE_CPU)));
    }

    @Test
    void severalCommunicatorsThatCannotOverlapGetAdvice() {
        List<String> w = warnings(EffectiveStrategy.resolve(new DistributedStrategy().ncclCommNum(2), ONE_NODE_FOUR_GPUS));
        assertEquals("nccl_comm_num = 2: advice: with sync_nccl_allreduce on, the communicators cannot overlap;"
                + " set sync_nccl_allreduce: false to let them", w.getLast());
    }

    @Test
    void sourceSaysWhereEachValueCameFrom() {
        DistributedStrategy s = DistributedStrategy.parse("amp: false\nnccl_comm_num: 2\n", StrategyFormat.YAML, "s.yaml").lars(true);
        EffectiveStrategy e = EffectiveStrategy.resolve(s, ONE_CPU);
        assertEquals("file:1", e.source(StrategySchema.AMP));
        assertEquals("rule", e.source(StrategySchema.NCCL_COMM_NUM));
        assertEquals("code", e.source(StrategySchema.LARS));
        assertEquals("default", e.source(StrategySchema.RECOMPUTE));
    }

    @Test
    void resolveRefusesAContradictoryStrategy() {
        DistributedStrategy s = new DistributedStrategy().aSync(true);
        assertEquals("a_sync applies only to mode ps, but mode is collective (the default); set mode: ps or remove it",
                assertThrows(StrategyException.class, () -> EffectiveStrategy.resolve(s, ONE_CPU)).getMessage());
    }

    @Test
    void worldChecksItsOwnValues() {
        assertEquals("nnodes: 0 is out of range: must be at least 1",
                assertThrows(StrategyException.class, () -> new World(0, 1, "cpu")).getMessage());
        assertEquals("nproc_per_node: -1 is out of range: must be at least 1",
                assertThrows(StrategyException.class, () -> new World(1, -1, "cpu")).getMessage());
        assertEquals("device: 'tpu' is not allowed; allowed: cpu, gpu",
                assertThrows(StrategyException.class, () -> new World(1, 1, "tpu")).getMessage());
        assertEquals("2 nodes x 4 ranks per node = 8 ranks on gpu", TWO_NODES_FOUR_GPUS.describe());
        assertEquals("1 node x 1 rank per node = 1 rank on cpu", ONE_CPU.describe());
    }
}
