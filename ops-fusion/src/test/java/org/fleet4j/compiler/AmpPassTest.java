package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.fleet4j.core.amp.AmpConfig;
import org.fleet4j.core.amp.AmpDtype;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Regularizer;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The amp pass on one process: where casts and the loss-scaling ops go, that bf16 training tracks fp32 training,
 * that a step with inf gradients changes no parameter or optimizer state and shrinks the scale, and that finite
 * steps grow it.
 */
class AmpPassTest {
    private static final int[] HIDDEN = {16, 12};

    private static AmpConfig config(double init, int incrEvery, int decrEvery, boolean dynamic) {
        return new AmpConfig(AmpDtype.BF16, init, incrEvery, decrEvery, 2.0, 0.5, dynamic, Set.of(), Set.of());
    }

    private static Program amp(Nets.Net net, AmpConfig c) {
        return new AmpPass(c, AmpPass.CPU_BF16_KERNELS).apply(net.main()).program();
    }

    private static Nets.Net mlp(Function<Program, Optimizer> optimizer) {
        return Nets.mlp("relu", HIDDEN, optimizer);
    }

    /** A regularizer's decay is added to the unscaled gradient, and only on the steps whose updates run. */
    @Test
    void aRegularizersDecayRunsAfterTheUnscaleInsideTheSkippedBlock() {
        Layers nn = new Layers(new Program().setRandomSeed(3), new Program());
        Var x = nn.data("x", DType.F32, -1, 4);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var logits = nn.fc(x, 3, null, ParamAttr.DEFAULT.withRegularizer(Regularizer.l2Decay(0.1f)), ParamAttr.DEFAULT);
        new SGD(0.1).minimize(nn.mean(nn.softmaxWithCrossEntropy(logits, y)));
        Program p = new AmpPass(config(1024, 1000, 2, true), AmpPass.CPU_BF16_KERNELS).apply(nn.main()).program();
        List<Op> ops = p.globalBlock().ops();
        List<String> types = Nets.opTypes(p);
        int decay = -1;
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).type().equals("scale") && ops.get(i).in("X").equals("fc_0.w_0")) {
                decay = i;
            }
        }
        assertTrue(types.indexOf("check_finite_and_unscale") < decay && types.indexOf("conditional_begin") < decay
                && decay < types.indexOf("sgd"), "decay at #" + decay + " in " + types);
    }

    @Test
    void whiteOpsReadBf16CastsOfFp32MasterWeightsAndTheUpdatesRunOnlyOnFiniteSteps() {
        Nets.Net net = mlp(p -> new SGD(0.1));
        Program p = amp(net, config(1024, 1000, 2, true));
        Block b = p.globalBlock();
        List<Op> ops = b.ops();
        int matmuls = 0;
        for (Op op : ops) {
            if (op.type().equals("matmul")) {
                matmuls++;
                for (String in : op.allInputs()) {
                    assertEquals(DType.BF16, b.var(in).dtype(), "matmul input " + in);
                    assertTrue(in.endsWith(".cast_bf16"), in + " is a cast copy");
                }
                assertEquals(DType.BF16, b.var(op.out("Out")).dtype());
            }
            if (op.type().equals("elementwise_add") || op.type().startsWith("softmax") || op.type().equals("relu")
                    || op.type().equals("mean") || op.type().equals("sgd")) {
                for (String in : op.allInputs()) {
                    if (b.var(in).dtype().isFloating()) {
                        assertEquals(DType.F32, b.var(in).dtype(), op.type() + " input " + in);
                    }
                }
            }
        }
        assertEquals(3, matmuls);
        for (Var v : b.vars()) {
            if (v.isParameter()) {
                assertEquals(DType.F32, v.dtype(), "parameter " + v.name() + " stays a float32 master weight");
                assertTrue(b.hasVar(v.name() + ".cast_bf16") || !v.name().contains("w"), v.name());
            }
        }
        // 3 weights and 3 activations into matmuls go to bf16; 3 matmul outputs come back to fp32
        assertEquals(9, Nets.count(p, "cast"));
        assertEquals(8, Nets.count(p, "cast_grad"), "all but the cast of the data x, which needs no gradient");

        List<String> types = Nets.opTypes(p);
        int scale = types.indexOf("elementwise_mul");
        assertEquals(net.loss(), ops.get(scale).in("X"));
        assertEquals(AmpPass.LOSS_SCALING, ops.get(scale).in("Y"));
        assertEquals(scale + 1, types.indexOf("fill_constant"), "backward starts from the scaled loss");
        assertEquals(net.loss() + "@SCALED@GRAD", ops.get(scale + 1).out("Out"));

        int check = types.indexOf("check_finite_and_unscale");
        int lastGrad = -1;
        for (int i = 0; i < types.size(); i++) {
            if (types.get(i).endsWith("_grad")) {
                lastGrad = i;
            }
        }
        assertTrue(check > lastGrad, "the check reads the finished gradients");
        assertEquals(List.of("update_loss_scaling", "logical_not", "conditional_begin"), types.subList(check + 1, check + 4));
        int begin = check + 3;
        int end = types.indexOf("conditional_end");
        List<Integer> sgds = new ArrayList<>();
        for (int i = 0; i < types.size(); i++) {
            if (types.get(i).equals("sgd")) {
                sgds.add(i);
            }
        }
        assertEquals(6, sgds.size());
        assertTrue(sgds.getFirst() > begin && sgds.getLast() < end, "every update is inside the conditional block");
        List<String> unscaled = ops.get(check).input("X");
        for (int i : sgds) {
            assertTrue(unscaled.contains(ops.get(i).in("Grad")), ops.get(i).in("Grad") + " is unscaled and checked");
            assertEquals(DType.F32, b.var(ops.get(i).in("Grad")).dtype());
        }
        assertEquals(ops.get(check).input("X"), ops.get(check).output("Out"), "unscaled in place");

        for (String state : List.of(AmpPass.LOSS_SCALING, AmpPass.GOOD_STEPS, AmpPass.BAD_STEPS)) {
            assertTrue(b.var(state).persistable(), state + " is saved with checkpoints");
        }
        Op init = p.startupProgram().globalBlock().ops().stream()
                .filter(o -> o.out("Out").equals(AmpPass.LOSS_SCALING)).findFirst().orElseThrow();
        assertEquals(1024f, init.floatAttr("value"));
        assertSame(net.main().startupProgram(), net.startup(), "the argument's startup program is left alone");
        assertFalse(net.startup().globalBlock().hasVar(AmpPass.LOSS_SCALING));
    }

    @Test
    void customListsMoveOpsAndAFixedScaleHasNoUpdateOp() {
        AmpConfig keepMatmul = new AmpConfig(AmpDtype.BF16, 1, 1000, 2, 2.0, 0.5, false, Set.of(), Set.of("matmul"));
        Program p = amp(mlp(q -> new SGD(0.1)), keepMatmul);
        assertEquals(0, Nets.count(p, "cast"), "matmul black-listed: nothing runs in bf16");
        assertEquals(0, Nets.count(p, "update_loss_scaling"));
        assertEquals(1, Nets.count(p, "check_finite_and_unscale"), "non-finite steps are still skipped");

        AmpConfig whiteRelu = new AmpConfig(AmpDtype.BF16, 1, 1000, 2, 2.0, 0.5, true, Set.of("relu"), Set.of());
        PassResult r = new AmpPass(whiteRelu, AmpPass.CPU_BF16_KERNELS).apply(mlp(q -> new SGD(0.1)).main());
        assertTrue(r.notes().getFirst().contains("white ops without a bfloat16 kernel here stay float32: {relu=2}"),
                r.notes().getFirst());
    }

    @Test
    void bf16TrainingTracksFp32Training() {
        int steps = 20;
        Nets.Net net = mlp(p -> new Adam(0.01));
        Nets.Trained fp32 = Nets.train(net.main(), net.startup(), net.loss(), steps);
        Program ampMain = amp(net, config(1024, 1000, 2, true));
        Nets.Trained bf16 = Nets.train(ampMain, ampMain.startupProgram(), net.loss(), steps);
        assertTrue(bf16.losses().getLast() < 0.6f * bf16.losses().getFirst(),
                "amp training learns: " + bf16.losses());
        float worst = 0f;
        for (int s = 0; s < steps; s++) {
            float diff = Math.abs(fp32.losses().get(s) - bf16.losses().get(s));
            worst = Math.max(worst, diff);
            // bf16 keeps 8 significant bits: about 0.4% per rounding, a few percent after 20 steps
            assertEquals(fp32.losses().get(s), bf16.losses().get(s), 0.03f * Math.max(1f, fp32.losses().get(s)),
                    "loss at step " + s);
        }
        assertTrue(worst > 0f, "the amp run really computes in bf16 (its losses differ from fp32's)");
        for (var e : fp32.params().entrySet()) {
            float[] a = e.getValue();
            float[] b = bf16.params().get(e.getKey());
            for (int i = 0; i < a.length; i++) {
                assertEquals(a[i], b[i], 0.03f + 0.05f * Math.abs(a[i]), e.getKey() + "[" + i + "]");
            }
        }
    }

    @Test
    void aStepWithInfGradientsChangesNoStateAndShrinksTheScale() {
        Nets.Net net = mlp(p -> new Adam(0.01));
        Program main = amp(net, config(1024, 1000, 1, true));
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(main.startupProgram(), scope);
        exe.run(main, scope, Nets.batch(0), List.of());
        Map<String, float[]> before = optimizerState(main, scope);
        Map<String, Tensor> poisoned = Nets.batch(1);
        poisoned.get("x").setFloat(3, Float.POSITIVE_INFINITY);
        Tensor found = exe.run(main, scope, poisoned, List.of(AmpPass.FOUND_INFINITE)).get(AmpPass.FOUND_INFINITE);
        assertEquals(1, found.getLong(0));
        Map<String, float[]> after = optimizerState(main, scope);
        for (var e : before.entrySet()) {
            assertArrayEquals(e.getValue(), after.get(e.getKey()), e.getKey() + " unchanged by the skipped step");
        }
        assertEquals(512f, scope.get(AmpPass.LOSS_SCALING).getFloat(0), "scale halved after one bad step");

        assertEquals(0, exe.run(main, scope, Nets.batch(2), List.of(AmpPass.FOUND_INFINITE))
                .get(AmpPass.FOUND_INFINITE).getLong(0));
        Map<String, float[]> next = optimizerState(main, scope);
        assertFalse(java.util.Arrays.equals(after.get("fc_0.w_0"), next.get("fc_0.w_0")),
                "the next finite step updates again");
        assertEquals(512f, scope.get(AmpPass.LOSS_SCALING).getFloat(0));
    }

    @Test
    void theScaleGrowsAfterIncrEveryNFiniteSteps() {
        Nets.Net net = mlp(p -> new SGD(0.05));
        Program main = amp(net, config(8, 3, 2, true));
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(main.startupProgram(), scope);
        float[] expected = {8, 8, 16, 16, 16, 32, 32};
        for (int s = 0; s < expected.length; s++) {
            exe.run(main, scope, Nets.batch(s), List.of());
            assertEquals(expected[s], scope.get(AmpPass.LOSS_SCALING).getFloat(0), "scale after step " + s);
            assertEquals((s + 1) % 3, scope.get(AmpPass.GOOD_STEPS).getLong(0), "good steps after step " + s);
        }
    }

    @Test
    void theScaleAndItsCountersSurviveACheckpoint(@TempDir Path dir) {
        Program main = amp(mlp(p -> new SGD(0.05)), config(8, 3, 2, true));
        Executor exe = new Executor();
        Scope trained = new Scope();
        exe.run(main.startupProgram(), trained);
        for (int s = 0; s < 2; s++) {
            exe.run(main, trained, Nets.batch(s), List.of());
        }
        Path file = dir.resolve("amp.safetensors");
        SafeTensors.write(file, persistables(main, trained), Map.of());
        Scope resumed = new Scope();
        exe.run(main.startupProgram(), resumed);
        SafeTensors.loadInto(file, persistables(main, resumed), true);
        assertEquals(2, resumed.get(AmpPass.GOOD_STEPS).getLong(0));
        exe.run(main, trained, Nets.batch(2), List.of());
        exe.run(main, resumed, Nets.batch(2), List.of());
        assertEquals(16f, resumed.get(AmpPass.LOSS_SCALING).getFloat(0), "the third good step after the restore grows the scale");
        for (var e : persistables(main, trained).entrySet()) {
            assertArrayEquals(e.getValue().toDoubleArray(), resumed.get(e.getKey()).toDoubleArray(), e.getKey());
        }
    }

    private static Map<String, Tensor> persistables(Program main, Scope scope) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        for (Var v : main.globalBlock().vars()) {
            if (v.persistable() && !v.isData()) {
                m.put(v.name(), scope.get(v.name()));
            }
        }
        return m;
    }

    @Test
    void theScaleCancelsOut() {
        // with a power-of-two scale the unscaled gradients are the unscaled run's, bit for bit
        Nets.Net net = mlp(p -> new SGD(0.1));
        Program scaled = amp(net, config(65536, 1000, 2, false));
        Program unscaled = amp(net, config(1, 1000, 2, false));
        Nets.Trained a = Nets.train(scaled, scaled.startupProgram(), net.loss(), 5);
        Nets.Trained b = Nets.train(unscaled, unscaled.startupProgram(), net.loss(), 5);
        assertEquals(b.losses(), a.losses());
        for (var e : b.params().entrySet()) {
            if (!e.getKey().equals(AmpPass.LOSS_SCALING)) {
                assertArrayEquals(e.getValue(), a.params().get(e.getKey()), e.getKey());
            }
        }
    }

    @Test
    void float16IsRefusedAndProgramsWithoutBackwardAreLeftAlone() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new AmpPass(
                AmpConfig.defaults(AmpDtype.FP16), AmpPass.CPU_BF16_KERNELS));
        assertTrue(e.getMessage().contains("set amp_configs.dtype: bfloat16"), e.getMessage());
        Program forwardOnly = new Program();
        forwardOnly.globalBlock().createVar("x", DType.F32, 2, 2).setData(true);
        forwardOnly.globalBlock().appendOp("relu", Map.of("X", List.of("x")), Map.of("Out", List.of("y")), Map.of());
        PassResult r = new AmpPass(config(1, 1, 1, true), AmpPass.CPU_BF16_KERNELS).apply(forwardOnly);
        assertSame(forwardOnly, r.program());
        assertTrue(r.notes().getFirst().contains("no backward"), r.notes().getFirst());
    }

    @Test
    void theStrategyTurnsAmpOnFirstWithItsConfigs() {
        DistributedStrategy s = new DistributedStrategy().amp(true)
                .set(org.fleet4j.strategy.schema.StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS, true);
        s.ampConfigs().dtype("bfloat16").initLossScaling(256).incrEveryNSteps(5).customBlackList("relu");
        Pipeline pipeline = Pipeline.forStrategy(EffectiveStrategy.resolve(s, new World(1, 1, "cpu")));
        assertEquals(AmpPass.NAME, pipeline.passes().getFirst().name());
        Compilation c = pipeline.run(mlp(p -> new SGD(0.1)).main());
        Op update = c.program().globalBlock().ops().stream().filter(o -> o.type().equals("update_loss_scaling"))
                .findFirst().orElseThrow();
        assertEquals(5, update.intAttr("incr_every_n_steps"));
        assertTrue(c.describe().contains("init 256.0"), c.describe());

        s.ampConfigs().dtype("float16");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Pipeline.forStrategy(EffectiveStrategy.resolve(s, new World(1, 1, "cpu"))));
        assertTrue(e.getMessage().contains("amp_configs.dtype fp16"), e.getMessage());
    }

    @Test
    void ampComposesWithTheOtherPassesOfTheCpuPipeline() {
        DistributedStrategy s = new DistributedStrategy().amp(true)
                .set(org.fleet4j.strategy.schema.StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS, true)
                .set(org.fleet4j.strategy.schema.StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS, true)
                .set(org.fleet4j.strategy.schema.StrategySchema.BUILD_ENABLE_INPLACE, true);
        s.ampConfigs().dtype("bfloat16").initLossScaling(1024);
        Nets.Net net = mlp(p -> new Adam(0.01));
        Compilation all = Pipeline.forStrategy(EffectiveStrategy.resolve(s, new World(1, 1, "cpu"))).run(net.main());
        assertEquals(List.of("amp", "fuse_elewise_add_act_ops", "fuse_all_optimizer_ops", "enable_inplace"),
                all.reports().stream().map(PassReport::pass).toList());
        Program ampOnly = amp(net, config(1024, 1000, 2, true));
        Nets.Trained expected = Nets.train(ampOnly, ampOnly.startupProgram(), net.loss(), 8);
        Nets.Trained actual = Nets.train(all.program(), all.program().startupProgram(), net.loss(), 8);
        assertEquals(expected.losses(), actual.losses(), all.describe());
    }

    @Test
    void underGradientMergeTheScaleMovesOncePerMergedUpdate() {
        Nets.Net net = mlp(p -> new SGD(0.05));
        Program ampMain = amp(net, config(8, 2, 2, true));
        Program merged = new GradientMergePass(2, true).apply(ampMain).program();
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(merged.startupProgram(), scope);
        float[] expected = {8, 8, 8, 16, 16, 16, 16, 32};
        float[] w = scope.get("fc_0.w_0").toFloatArray();
        for (int s = 0; s < expected.length; s++) {
            exe.run(merged, scope, Nets.batch(s), List.of());
            assertEquals(expected[s], scope.get(AmpPass.LOSS_SCALING).getFloat(0), "scale after micro-step " + s);
            float[] now = scope.get("fc_0.w_0").toFloatArray();
            assertEquals(s % 2 == 1, !java.util.Arrays.equals(w, now), "weights change on every 2nd micro-step only, step " + s);
            w = now;
        }
    }

    /** Every float persistable: parameters, Adam's moments and beta powers. */
    private static Map<String, float[]> optimizerState(Program main, Scope scope) {
        Map<String, float[]> state = new LinkedHashMap<>();
        for (Var v : main.globalBlock().vars()) {
            if (v.persistable() && v.dtype() == DType.F32 && !v.name().equals(AmpPass.LOSS_SCALING)) {
                state.put(v.name(), scope.get(v.name()).toFloatArray());
            }
        }
        assertTrue(state.size() > 12, "parameters and moments: " + state.keySet());
        return state;
    }
}
