package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.ClipOps;
import org.fleet4j.core.ops.ControlOps;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.optim.AdamW;
import org.fleet4j.core.optim.ClipGradByGlobalNorm;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.Test;

/**
 * With data parallelism the gradient clip by global norm must see the summed gradients: in a 2-rank program compiled
 * under each strategy that moves allreduces (buckets, overlap with backward, fp16 allreduce, gradient merge, the fused
 * optimizer, amp), the clip comes after every allreduce (and every wait for one) and before every update; under
 * gradient merge it runs in the merged tail, and under amp after the unscaling.
 */
class GradientClipOrderTest {
    private static final List<String> COLLECTIVES = List.of(CollectiveOpTypes.ALLREDUCE,
            CollectiveOpTypes.ALLREDUCE_START, CollectiveOpTypes.WAIT);

    private static Program compiled(DistributedStrategy s) {
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{16, 12}, new AdamW(LrSchedule.warmupCosine(0.01, 2, 20,
                0, 0), 0.9f, 0.95f, 1e-8f, 0.1f, AdamW.notBiasOrNorm()).withGradClip(new ClipGradByGlobalNorm(1f)));
        return Pipeline.forStrategy(EffectiveStrategy.resolve(s, new World(1, 2, "cpu"))).run(net.main()).program();
    }

    private static int clipIndex(List<Op> ops) {
        List<Integer> at = indices(ops, List.of(ClipOps.CLIP_BY_GLOBAL_NORM));
        assertEquals(1, at.size(), "one clip op in " + types(ops));
        return at.getFirst();
    }

    private static List<Integer> indices(List<Op> ops, List<String> types) {
        return java.util.stream.IntStream.range(0, ops.size()).filter(i -> types.contains(ops.get(i).type())).boxed()
                .toList();
    }

    private static void assertClipAfterCollectivesBeforeUpdates(Program p, String strategy) {
        List<Op> ops = p.globalBlock().ops();
        int clip = clipIndex(ops);
        List<Integer> collectives = indices(ops, COLLECTIVES);
        assertTrue(!collectives.isEmpty(), strategy + ": the 2-rank program has allreduces");
        for (int c : collectives) {
            assertTrue(c < clip, strategy + ": op #" + c + " " + ops.get(c).type() + " comes after the clip (op #" + clip
                    + "): " + types(ops));
        }
        for (int u : indices(ops, List.of("adamw", "fused_adam"))) {
            assertTrue(u > clip, strategy + ": update op #" + u + " comes before the clip: " + types(ops));
        }
    }

    private static List<String> types(List<Op> ops) {
        return ops.stream().map(Op::type).toList();
    }

    @Test
    void theClipComesAfterTheAllreducesUnderEveryStrategy() {
        assertClipAfterCollectivesBeforeUpdates(compiled(new DistributedStrategy()), "default (buckets)");
        assertClipAfterCollectivesBeforeUpdates(compiled(new DistributedStrategy()
                .set(StrategySchema.FUSE_ALL_REDUCE_OPS, false)), "one allreduce per gradient");
        assertClipAfterCollectivesBeforeUpdates(compiled(new DistributedStrategy()
                .set(StrategySchema.SYNC_NCCL_ALLREDUCE, false)), "allreduce overlapped with backward");
        assertClipAfterCollectivesBeforeUpdates(compiled(new DistributedStrategy()
                .set(StrategySchema.FP16_ALLREDUCE, true)), "fp16 allreduce");
        assertClipAfterCollectivesBeforeUpdates(compiled(new DistributedStrategy()
                .set(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS, true)), "fused optimizer");
    }

    @Test
    void underGradientMergeTheClipRunsOnTheMergedGradientsEveryKthStep() {
        Program p = compiled(new DistributedStrategy().gradientMerge(true).set(StrategySchema.GRADIENT_MERGE_K_STEPS, 4));
        assertClipAfterCollectivesBeforeUpdates(p, "gradient merge");
        List<Op> ops = p.globalBlock().ops();
        int begin = indices(ops, List.of(ControlOps.BEGIN)).getFirst();
        int clip = clipIndex(ops);
        assertTrue(begin < clip, "the clip is inside the merged tail: " + types(ops));
        assertTrue(ops.get(clip).input("X").stream().allMatch(g -> g.endsWith("@GRAD_MERGE")),
                "the clip reads the accumulators: " + ops.get(clip).input("X"));
    }

    @Test
    void underAmpTheClipSeesUnscaledGradients() {
        DistributedStrategy s = new DistributedStrategy().set(StrategySchema.AMP, true);
        s.ampConfigs().dtype("bfloat16");
        Program p = compiled(s);
        assertClipAfterCollectivesBeforeUpdates(p, "amp");
        List<Op> ops = p.globalBlock().ops();
        int unscale = indices(ops, List.of("check_finite_and_unscale")).getFirst();
        int begin = indices(ops, List.of(ControlOps.BEGIN)).getFirst();
        assertTrue(unscale < clipIndex(ops) && begin < clipIndex(ops), "amp: unscale and skip block before the clip: "
                + types(ops));
    }
}
