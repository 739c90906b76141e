package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Regularizer;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.ops.ControlOps;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.Test;

class GradientMergePassTest {
    /** k micro-batches of 16 samples, concatenated: the batch one unmerged step sees. */
    private static Map<String, Tensor> bigBatch(int first, int k) {
        float[] x = new float[16 * 8 * k];
        long[] y = new long[16 * k];
        for (int m = 0; m < k; m++) {
            Map<String, Tensor> b = Nets.batch(first + m);
            System.arraycopy(b.get("x").toFloatArray(), 0, x, m * 16 * 8, 16 * 8);
            System.arraycopy(b.get("y").toLongArray(), 0, y, m * 16, 16);
        }
        return Map.of("x", Tensor.of(x, 16L * k, 8), "y", Tensor.ofLongs(y, 16L * k, 1));
    }

    private static Map<String, float[]> params(Program p, Scope scope) {
        return p.globalBlock().vars().stream().filter(v -> v.isParameter())
                .collect(java.util.stream.Collectors.toMap(v -> v.name(), v -> scope.get(v.name()).toFloatArray()));
    }

    private static void mergedEqualsBigBatch(Function<Program, Optimizer> opt) {
        mergedEqualsBigBatch(Nets.mlp("tanh", new int[]{16}, opt));
    }

    private static void mergedEqualsBigBatch(Nets.Net net) {
        int k = 4;
        Program merged = new GradientMergePass(k, true).apply(net.main()).program();

        Executor exe = new Executor();
        Scope big = new Scope();
        exe.run(net.startup(), big);
        for (int s = 0; s < 2; s++) {
            exe.run(net.main(), big, bigBatch(s * k, k), List.of());
        }
        Scope micro = new Scope();
        exe.run(merged.startupProgram(), micro);
        Map<String, float[]> initial = params(merged, micro);
        for (int s = 0; s < 2 * k; s++) {
            exe.run(merged, micro, Nets.batch(s), List.of(net.loss()));
            if (s < k - 1) {
                Map<String, float[]> now = params(merged, micro);
                initial.forEach((n, v) -> assertArrayEquals(v, now.get(n), n + " must not move before the k-th step"));
            }
        }
        Map<String, float[]> expected = params(net.main(), big);
        Map<String, float[]> actual = params(merged, micro);
        for (var e : expected.entrySet()) {
            float[] a = e.getValue();
            float[] b = actual.get(e.getKey());
            for (int i = 0; i < a.length; i++) {
                assertEquals(a[i], b[i], 2e-5f * Math.max(1f, Math.abs(a[i])), e.getKey() + "[" + i + "]");
            }
        }
        assertFalse(java.util.Arrays.equals(expected.get("fc_0.w_0"), initial.get("fc_0.w_0")), "training moved the parameters");
    }

    /** A regularizer's decay is added once per merged step, to the averaged gradient: as in one step of the big batch. */
    @Test
    void regularizedParametersMergeLikeTheBigBatch() {
        Program main = new Program().setRandomSeed(11);
        Layers nn = new Layers(main, new Program());
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = nn.fc(x, 16, "tanh", ParamAttr.DEFAULT.withRegularizer(Regularizer.l2Decay(0.5f)), ParamAttr.DEFAULT);
        Var logits = nn.fc(h, 3, null, ParamAttr.DEFAULT.withRegularizer(Regularizer.l1Decay(0.05f)), ParamAttr.DEFAULT);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(logits, y));
        new Momentum(0.1, 0.9f).minimize(loss);
        mergedEqualsBigBatch(new Nets.Net(main, nn.startup(), loss.name()));
    }

    @Test
    void fourMicroStepsOfSgdEqualOneStepOnTheFourTimesLargerBatch() {
        mergedEqualsBigBatch(p -> new SGD(0.3));
    }

    @Test
    void fourMicroStepsOfAdamEqualOneStepOnTheFourTimesLargerBatch() {
        mergedEqualsBigBatch(p -> new Adam(0.02));
    }

    @Test
    void fourMicroStepsOfMomentumEqualOneStepOnTheFourTimesLargerBatch() {
        mergedEqualsBigBatch(p -> new Momentum(0.1, 0.9f));
    }

    @Test
    void theUpdatesRunInsideAConditionalRegionOnAccumulators() {
        Nets.Net net = Nets.mlp("relu", new int[]{16}, p -> new SGD(0.1));
        PassResult r = new GradientMergePass(3, false).apply(net.main());
        Program p = r.program();
        List<String> types = Nets.opTypes(p);
        int begin = types.indexOf(ControlOps.BEGIN);
        int end = types.indexOf(ControlOps.END);
        assertTrue(begin > 0 && end == types.size() - 1, types.toString());
        assertEquals(ControlOps.MERGE_STEP, types.get(begin - 1));
        assertEquals(List.of("sgd", "sgd", "sgd", "sgd"),
                types.subList(begin, end).stream().filter(t -> t.equals("sgd")).toList());
        assertEquals(2 + 4, types.stream().filter(t -> t.equals("elementwise_add")).count(),
                "the two layers' bias adds and one accumulation per gradient");
        p.globalBlock().ops().stream().filter(o -> o.type().equals("sgd"))
                .forEach(o -> assertTrue(o.in("Grad").endsWith("@GRAD@GRAD_MERGE"), o.toString()));
        assertEquals(0, p.globalBlock().ops().subList(begin, end).stream()
                .filter(o -> o.type().equals("scale") && o.floatAttr("scale") != 0f).count(), "avg off: no division");
        assertTrue(p.startupProgram() != net.startup(), "accumulators are created in a copy of the startup program");
        assertEquals(4 + 1, Nets.count(p.startupProgram(), "fill_constant") - Nets.count(net.startup(), "fill_constant"));
        assertTrue(r.notes().getFirst().startsWith("merged 4 gradients over k_steps 3 (summed)"), r.notes().toString());
    }

    @Test
    void withTheWholePipelineTheAllreduceRunsOncePerKSteps() {
        DistributedStrategy s = new DistributedStrategy().gradientMerge(true)
                .set(StrategySchema.GRADIENT_MERGE_K_STEPS, 3)
                .set(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS, true);
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{16}, new SGD(0.1));
        Compilation c = Pipeline.forStrategy(EffectiveStrategy.resolve(s, new World(1, 2, "cpu"))).run(net.main());
        assertTrue(c.describe().startsWith("compiler pipeline: gradient_merge -> fuse_all_reduce_ops -> fuse_all_optimizer_ops"),
                c.describe());
        List<String> types = Nets.opTypes(c.program());
        int begin = types.indexOf(ControlOps.BEGIN);
        assertTrue(types.indexOf("c_allreduce") > begin, "the bucket's allreduce stays inside the region: " + types);
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(c.program().startupProgram(), scope);
        StandInAllreduce.CALLS.clear();
        for (int step = 0; step < 6; step++) {
            exe.run(c.program(), scope, Nets.batch(step), List.of());
        }
        assertEquals(2, StandInAllreduce.CALLS.size(), "one bucket, reduced on steps 3 and 6");
    }

    @Test
    void aProgramWithoutUpdatesIsLeftAloneAndKBelowOneIsRejected() {
        Program p = new Program();
        p.globalBlock().createVar("x", DType.F32, 2);
        PassResult r = new GradientMergePass(2, true).apply(p);
        assertSame(p, r.program());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new GradientMergePass(0, true));
        assertEquals("gradient_merge_configs.k_steps must be at least 1, is 0", e.getMessage());
    }
}
