package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.ProgramJson;
import org.fleet4j.core.ops.fused.FusedElewiseAddActOp;
import org.fleet4j.core.ops.fused.FusedOptimizerOps;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.Test;

class PipelineTest {
    private static EffectiveStrategy effective(DistributedStrategy s) {
        return EffectiveStrategy.resolve(s, new World(1, 2, "cpu"));
    }

    private static List<String> names(Pipeline p) {
        return p.passes().stream().map(Pass::name).toList();
    }

    @Test
    void theDefaultStrategyOnlyBucketsAllreduces() {
        assertEquals(List.of("fuse_all_reduce_ops"), names(Pipeline.forStrategy(effective(new DistributedStrategy()))));
    }

    @Test
    void eachKnobAddsItsPassInTheFixedOrder() {
        DistributedStrategy s = new DistributedStrategy()
                .set(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS, true)
                .set(StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS, true);
        assertEquals(List.of("fuse_elewise_add_act_ops", "fuse_all_reduce_ops", "fuse_all_optimizer_ops"),
                names(Pipeline.forStrategy(effective(s))));
        s.set(StrategySchema.FUSE_ALL_REDUCE_OPS, false);
        assertEquals(List.of("fuse_elewise_add_act_ops", "fuse_all_optimizer_ops"), names(Pipeline.forStrategy(effective(s))));
        s.set(StrategySchema.FUSE_ALL_REDUCE_OPS, true).set(StrategySchema.BUILD_FUSE_BN_ACT_OPS, true)
                .set(StrategySchema.GRADIENT_MERGE, true).set(StrategySchema.FP16_ALLREDUCE, true);
        assertEquals(List.of("fuse_elewise_add_act_ops", "fuse_bn_act_ops", "gradient_merge", "fuse_all_reduce_ops",
                "fp16_allreduce", "fuse_all_optimizer_ops"), names(Pipeline.forStrategy(effective(s))));
    }

    @Test
    void gradientMergeSettingsReachThePass() {
        DistributedStrategy s = new DistributedStrategy().gradientMerge(true)
                .set(StrategySchema.GRADIENT_MERGE_K_STEPS, 5).set(StrategySchema.GRADIENT_MERGE_AVG, false);
        Nets.Net net = Nets.mlp("relu", new int[]{8}, p -> new Adam(0.01));
        Compilation c = Pipeline.forStrategy(effective(s)).run(net.main());
        assertTrue(c.describe().contains("merged 4 gradients over k_steps 5 (summed)"), c.describe());
    }

    @Test
    void invalidCombinationsAreRejectedByTheStrategyBeforeAnyPassRuns() {
        DistributedStrategy s = new DistributedStrategy().gradientMerge(true).syncBatchNorm(true);
        org.fleet4j.strategy.schema.StrategyException e = assertThrows(org.fleet4j.strategy.schema.StrategyException.class,
                () -> Pipeline.forStrategy(effective(s)));
        assertTrue(e.getMessage().contains("sync_batch_norm"), e.getMessage());
    }

    @Test
    void theStrategysBucketSettingsReachThePass() {
        DistributedStrategy s = new DistributedStrategy().fuseGradSizeInMB(16).fuseGradSizeInTFLOPS(8).lastCommGroupSizeMB(0.5)
                .ncclCommNum(3);
        FuseAllReducePass pass = (FuseAllReducePass) PassRegistry.create("fuse_all_reduce_ops", effective(s));
        assertEquals(new GradientBucketer(16L << 20, 8, 1L << 19, 3), pass.bucketer(), "buckets go round-robin to 3 rings");
    }

    @Test
    void allPassesTogetherTrainAsTheUncompiledProgramAndReportWhatTheyDid() {
        DistributedStrategy s = new DistributedStrategy()
                .set(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS, true)
                .set(StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS, true)
                .ncclCommNum(2);
        Nets.Net net = Nets.mlpWithAllreduce("sigmoid", new int[]{16, 12}, new Adam(0.02));
        Compilation c = Pipeline.forStrategy(effective(s)).run(net.main());
        Program p = c.program();
        assertEquals(0, Nets.count(p, "sigmoid"));
        assertEquals(0, Nets.count(p, "adam"));
        assertEquals(1, Nets.count(p, FusedOptimizerOps.ADAM));
        assertEquals(1, Nets.count(p, "c_allreduce"), "the six gradients (under 1 KB together) fit one bucket");
        String report = c.describe();
        assertTrue(report.startsWith("compiler pipeline: fuse_elewise_add_act_ops -> fuse_all_reduce_ops -> "
                + "fuse_all_optimizer_ops\n"), report);
        assertTrue(report.contains("  fuse_all_reduce_ops: "), report);
        assertTrue(report.contains("    6 c_allreduce ops -> 1 bucket(s) on 2 ring(s)"), report);
        Same.runs(Nets.train(net.main(), net.startup(), net.loss(), 10), Nets.train(p, net.startup(), net.loss(), 10), 1e-6f);
    }

    @Test
    void runInPlaceRewritesTheCallersProgramObject() {
        DistributedStrategy s = new DistributedStrategy().set(StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS, true);
        Nets.Net net = Nets.mlp("relu", new int[]{16}, p -> new Adam(0.02));
        Program untouched = net.main().copy();
        Compilation c = Pipeline.forStrategy(effective(s)).runInPlace(net.main());
        assertTrue(c.program() == net.main());
        assertEquals(1, Nets.count(net.main(), FusedElewiseAddActOp.TYPE));
        Same.runs(Nets.train(untouched, net.startup(), net.loss(), 5), Nets.train(net.main(), net.startup(), net.loss(), 5),
                1e-6f);
    }

    @Test
    void aCompiledProgramSurvivesItsJsonRoundTripAndTrainsTheSame() {
        DistributedStrategy s = new DistributedStrategy()
                .set(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS, true)
                .set(StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS, true)
                .set(StrategySchema.GRADIENT_MERGE, true).set(StrategySchema.GRADIENT_MERGE_K_STEPS, 2)
                .fp16Allreduce(true);
        Nets.Net net = Nets.mlpWithAllreduce("tanh", new int[]{16}, new Adam(0.02));
        Program compiled = Pipeline.forStrategy(effective(s)).run(net.main()).program();
        Program loaded = ProgramJson.fromJson(ProgramJson.toJson(compiled), "compiled.json");
        assertTrue(loaded.sameAs(compiled), "the JSON form holds every fused op, attribute and var");
        loaded.setStartupProgram(compiled.startupProgram());
        Same.runs(Nets.train(compiled, compiled.startupProgram(), net.loss(), 6),
                Nets.train(loaded, compiled.startupProgram(), net.loss(), 6), 0f);
    }

    @Test
    void anUnknownPassNameListsTheKnownOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PassRegistry.create("fuse_everything", effective(new DistributedStrategy())));
        assertTrue(e.getMessage().startsWith("no compiler pass named 'fuse_everything' (passes: [amp,"
                + " fuse_elewise_add_act_ops"), e.getMessage());
    }

    /** Every built-in pass registers itself beside its code, and the registry keeps the documented order. */
    @Test
    void thePassesAreFoundThroughServiceLoaderInTheirOrder() {
        assertEquals(List.of("amp", "fuse_elewise_add_act_ops", "fuse_relu_depthwise_conv", "fuse_bn_act_ops",
                "find_unused_parameters", "gradient_merge", "fuse_all_reduce_ops", "fp16_allreduce",
                "use_hierarchical_allreduce", "sync_batch_norm", "fuse_all_optimizer_ops", "enable_inplace", "overlap_allreduce"),
                PassRegistry.all().stream().map(PassDescription::name).toList());
        for (PassDescription d : PassRegistry.all()) {
            // overlap_allreduce runs unless sync_nccl_allreduce is set: its switch is the inverse of that knob
            String switchName = d.name().equals(OverlapAllreducePass.NAME) ? "sync_nccl_allreduce" : d.name();
            assertEquals(switchName, d.knobs().getFirst().field().name(), "the first knob of " + d + " is its switch");
        }
    }
}
