package org.fleet4j.core.ir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.layers.Initializer;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.optim.Adagrad;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.AdamW;
import org.fleet4j.core.optim.ClipGradByGlobalNorm;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Programs survive JSON unchanged: every op, every attribute type, backward and optimizer ops included. */
class ProgramJsonTest {

    /** No built-in op takes ints, floats or strings lists; this one does, so that they round-trip too. */
    @BeforeAll
    static void registerListAttributeOp() {
        OpRegistry.register(OpSpec.builder("test_list_attributes")
                .in("X").out("Out")
                .attr("ints", AttrType.INTS, new int[]{1, 2})
                .attr("floats", AttrType.FLOATS, new float[]{0.5f})
                .attr("strings", AttrType.STRINGS, new String[]{"a", "b"})
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> a -> a.outLike("Out", a.in("X")).copyFrom(a.in("X")))
                .gradKernel(op -> a -> a.outLike("X@GRAD", a.in("X")).copyFrom(a.in("Out@GRAD")))
                .build());
    }

    private record Model(Program main, Program startup, Var loss) {
    }

    /** A model that uses every built-in op, trained with all four optimizers (each on some parameters). */
    private static Model everyOp() {
        Program main = new Program().setRandomSeed(42);
        Layers nn = new Layers(main, new Program());
        Var x = nn.data("x", DType.F32, -1, 2, 3, 4);
        Var ids = nn.data("ids", DType.I64, -1, 1);
        Var label = nn.data("label", DType.I64, -1, 1);
        Var image = nn.conv2d(nn.batchNorm(x, false), 4, 3, 1, 1, "relu");
        image = nn.groupNorm(nn.conv2d(image, 4, 3, 1, 1, 1, 4, null, false), 2);
        image = nn.pool2d(image, new int[]{2, 2}, "avg", new int[]{1, 1}, new int[]{0, 0}, false, true, false);
        Var deconv = nn.createParameter("deconv.w_0", DType.F32, new long[]{4, 2, 2, 2}, Initializer.xavierUniform());
        image = nn.op("conv2d_transpose", Map.of("Input", List.of(image.name()), "Filter", List.of(deconv.name())),
                List.of("Output"), Map.of("output_size", new int[]{3, 4}))[0];
        Var flat = nn.reshape(image, 0, -1);
        Var listed = nn.op("test_list_attributes", Map.of("X", List.of(flat.name())), List.of("Out"),
                Map.of("ints", new int[]{3, 4, 5}, "floats", new float[]{1.5f, -2f}, "strings", new String[]{"x"}))[0];
        Var h = nn.dropout(nn.fc(listed, 8, "gelu"), 0.25f, false);
        Var dense = nn.embedding(ids, 10, 4, false);
        Var sparse = nn.embedding(ids, 10, 4, true);
        Var e = nn.concat(List.of(dense, sparse), -1);
        Var a = nn.sigmoid(nn.softmax(nn.fc(e, 8, "tanh")));
        Var b = nn.relu(nn.sub(nn.mul(h, a), nn.div(h, nn.scale(a, 2f, 1f))));
        Var c = nn.sum(List.of(b, nn.matmul(b, nn.createParameter("square", DType.F32, new long[]{8, 8},
                org.fleet4j.core.layers.Initializer.kaimingNormal()), false, true, 0.5f)));
        // a round trip through bfloat16, as the amp pass casts around white-listed ops
        Var low = nn.op("cast", Map.of("X", List.of(c.name())), List.of("Out"), Map.of("out_dtype", "bfloat16"))[0];
        Var back = nn.op("cast", Map.of("X", List.of(low.name())), List.of("Out"), Map.of("out_dtype", "float32"))[0];
        // a bias of given values: assign_value and its float list; a weight with L1Decay: sign, and a var's regularizer
        Var logits = nn.fc(back, 3, null, ParamAttr.DEFAULT.withRegularizer(Regularizer.l1Decay(1e-3f)),
                ParamAttr.initializedBy(org.fleet4j.core.layers.Initializer.values(new float[]{0.1f, -0.2f, 0.3f}, 3)));
        nn.accuracy(nn.softmax(logits), label);
        Var loss = nn.add(nn.mean(nn.softmaxWithCrossEntropy(logits, label)), nn.scale(transformerOps(nn, x), 0.01f, 0f));
        return new Model(main, nn.startup(), loss);
    }

    /** The transformer's ops on x [-1, 2, 3, 4], down to a scalar (the second half of the split goes unused). */
    private static Var transformerOps(Layers nn, Var x) {
        Var shifted = nn.add(x, nn.createParameter("shift", DType.F32, new long[]{4},
                org.fleet4j.core.layers.Initializer.normal(0f, 0.1f)));
        Var seq = nn.layerNorm(nn.flatten(nn.transpose(shifted, 0, 2, 1, 3), 2, 3), "ln");
        Var act = nn.hardSwish(nn.leakyRelu(nn.silu(nn.squeeze(nn.unsqueeze(seq, 1), 1)), 0.1f));
        Var attended = nn.multiHeadAttention(act, 2, true, null, 0f, false, "attn");
        Var half = nn.split(attended, 2, -1).get(0);
        Var stacked = nn.slice(nn.stack(List.of(half, half), 1), new int[]{2}, new long[]{0}, new long[]{-1});
        Var scores = nn.logSoftmax(nn.trilTriu(stacked, 0, true), 1);
        Var positions = nn.arange(0, 4, 1, DType.F32);
        Var row = nn.createParameter("row", DType.F32, new long[]{4}, org.fleet4j.core.layers.Initializer.normal(0f, 0.1f));
        return nn.mean(nn.where(positions, scores, nn.expand(row, 2, 2, 4)));
    }

    private static Model trained() {
        Model m = everyOp();
        List<ParamGrad> grads = Backward.appendBackward(m.loss());
        appendLossScaling(m, grads);
        List<List<ParamGrad>> groups = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>(),
                new ArrayList<>());
        for (int i = 0; i < grads.size(); i++) {
            groups.get(i % 5).add(grads.get(i));
        }
        new SGD(LrSchedule.stepDecay(0.1, 10, 0.5), 0f).applyGradients(m.main(), groups.get(0));
        new Momentum(LrSchedule.cosine(0.1, 100, 0.001).withWarmup(5, 0.01), 0.9f, true, 1e-4f)
                .applyGradients(m.main(), groups.get(1));
        new Adam(LrSchedule.constant(0.01), 0.9f, 0.99f, 1e-7f, true).applyGradients(m.main(), groups.get(2));
        new AdamW(LrSchedule.warmupCosine(0.01, 2, 20, 0, 0), 0.9f, 0.999f, 1e-8f, 0.05f, AdamW.notBiasOrNorm())
                .withGradClip(new ClipGradByGlobalNorm(5f)).applyGradients(m.main(), groups.get(3));
        new Adagrad(0.05).applyGradients(m.main(), groups.get(4));
        m.main().globalBlock().appendOp("conditional_end", Map.of(), Map.of(), Map.of());
        return m;
    }

    /** The ops the amp pass puts between backward and the updates, with their persistable state. */
    private static void appendLossScaling(Model m, List<ParamGrad> grads) {
        var main = m.main().globalBlock();
        var init = m.startup().globalBlock();
        for (String v : List.of("loss_scaling", "good_steps", "bad_steps")) {
            DType d = v.equals("loss_scaling") ? DType.F32 : DType.I64;
            main.createVar(v, d, 1).setPersistable(true);
            init.createVar(v, d, 1).setPersistable(true);
            init.appendOp("fill_constant", Map.of(), Map.of("Out", List.of(v)),
                    Map.of("shape", new long[]{1}, "dtype", d.displayName(), "value", v.equals("loss_scaling") ? 1f : 0f));
        }
        List<String> dense = grads.stream().map(ParamGrad::grad)
                .filter(g -> main.var(g).kind() != VarKind.SELECTED_ROWS).toList();
        main.appendOp("check_finite_and_unscale", Map.of("X", dense, "Scale", List.of("loss_scaling")),
                Map.of("Out", dense, "FoundInfinite", List.of("found_inf")), Map.of());
        main.appendOp("update_loss_scaling", Map.of("FoundInfinite", List.of("found_inf"),
                        "PrevLossScaling", List.of("loss_scaling"), "InGoodSteps", List.of("good_steps"),
                        "InBadSteps", List.of("bad_steps")),
                Map.of("LossScaling", List.of("loss_scaling"), "OutGoodSteps", List.of("good_steps"),
                        "OutBadSteps", List.of("bad_steps")), Map.of());
        main.appendOp("logical_not", Map.of("X", List.of("found_inf")), Map.of("Out", List.of("step_finite")), Map.of());
        // gradient merge's micro-step counter (every step is a k-th with k = 1), and amp's region around the updates
        main.createVar("merge_counter", DType.I64, 1).setPersistable(true);
        init.createVar("merge_counter", DType.I64, 1).setPersistable(true);
        init.appendOp("fill_constant", Map.of(), Map.of("Out", List.of("merge_counter")),
                Map.of("shape", new long[]{1}, "dtype", DType.I64.displayName(), "value", 0f));
        main.appendOp("merge_step", Map.of("Step", List.of("merge_counter")),
                Map.of("StepOut", List.of("merge_counter"), "Cond", List.of("merge_cond")), Map.of("k_steps", 1));
        main.appendOp("conditional_begin", Map.of("Cond", List.of("step_finite")), Map.of(), Map.of());
    }

    /** The op types (and their gradient ops) of the op libraries of a package. */
    private static Set<String> typesOf(String pkg) {
        Set<String> types = new TreeSet<>();
        for (OpLibrary library : ServiceLoader.load(OpLibrary.class)) {
            if (library.getClass().getPackageName().equals(pkg)) {
                library.specs().forEach(spec -> {
                    types.add(spec.type());
                    types.add(spec.type() + "_grad");
                });
            }
        }
        return types;
    }

    private static Program roundTrip(Program p) {
        return ProgramJson.fromJson(ProgramJson.toJson(p), "round trip");
    }

    @Test
    void everyOpAndAttributeTypeSurvives() {
        Model m = trained();
        Set<String> types = new TreeSet<>();
        m.main().globalBlock().ops().forEach(op -> types.add(op.type()));
        m.startup().globalBlock().ops().forEach(op -> types.add(op.type()));
        Set<String> builtin = new TreeSet<>(OpRegistry.types());
        builtin.removeIf(t -> t.startsWith("test_"));
        // the fused and collective ops only the compiler's passes insert: the passes' tests round-trip their programs
        builtin.removeAll(typesOf("org.fleet4j.core.ops.fused"));
        builtin.removeAll(typesOf("org.fleet4j.core.ops.collective"));
        builtin.removeAll(types);
        assertEquals(Set.of(), builtin, "built-in ops the test program does not use");
        Set<AttrType> attrTypes = new TreeSet<>();
        m.main().globalBlock().ops().forEach(op -> op.attrs().values().forEach(v -> attrTypes.add(ProgramJson.typeOf(v))));
        assertEquals(Set.of(AttrType.values()), attrTypes);
        assertTrue(m.main().globalBlock().vars().stream().anyMatch(v -> v.kind() == VarKind.SELECTED_ROWS));

        for (Program p : new Program[]{m.main(), m.startup()}) {
            Program loaded = roundTrip(p);
            assertTrue(loaded.sameAs(p), "loaded program differs:\n" + loaded);
            assertEquals(p.toString(), loaded.toString());
            assertEquals(ProgramJson.toJson(p), ProgramJson.toJson(loaded));
        }
    }

    @Test
    void aLoadedProgramTrainsExactlyLikeTheOriginal(@TempDir Path dir) throws Exception {
        Model m = trained();
        ProgramJson.save(m.main(), dir.resolve("main.json"));
        ProgramJson.save(m.startup(), dir.resolve("startup.json"));
        Program main = ProgramJson.load(dir.resolve("main.json"));
        Program startup = ProgramJson.load(dir.resolve("startup.json"));
        float[] original = train(m.main(), m.startup(), m.loss().name());
        float[] loaded = train(main, startup, m.loss().name());
        assertArrayEquals(original, loaded);
        assertTrue(original[2] < original[0], "the loss falls: " + java.util.Arrays.toString(original));
    }

    private static float[] train(Program main, Program startup, String loss) {
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(startup, scope);
        var r = new java.util.SplittableRandom(3);
        float[] xs = new float[6 * 24];
        for (int i = 0; i < xs.length; i++) {
            xs[i] = (float) r.nextDouble();
        }
        Map<String, Tensor> feed = Map.of("x", Tensor.of(xs, 6, 2, 3, 4),
                "ids", Tensor.ofLongs(new long[]{1, 4, 4, 9, 0, 2}, 6, 1),
                "label", Tensor.ofLongs(new long[]{0, 1, 2, 0, 1, 2}, 6, 1));
        float[] losses = new float[3];
        for (int s = 0; s < 3; s++) {
            losses[s] = exe.run(main, scope, feed, List.of(loss)).get(loss).getFloat(0);
        }
        return losses;
    }

    @Test
    void sameAsNoticesADifferentAttribute() {
        Model m = everyOp();
        String json = ProgramJson.toJson(m.main());
        String changed = json.replace("\"value\" : 0.25", "\"value\" : 0.3");
        assertFalse(json.equals(changed), "the dropout probability is in the JSON");
        assertFalse(ProgramJson.fromJson(changed, "changed").sameAs(m.main()));
    }

    @Test
    void badJsonIsNamed() {
        var e = assertThrows(IrException.class, () -> ProgramJson.fromJson("{", "model.json"));
        assertTrue(e.getMessage().startsWith("model.json: not valid JSON"), e.getMessage());
        var e2 = assertThrows(IrException.class, () -> ProgramJson.fromJson("{\"format\": \"onnx\"}", "model.json"));
        assertTrue(e2.getMessage().contains("not a Fleet4J program"), e2.getMessage());
        String json = ProgramJson.toJson(everyOp().main()).replace("\"type\" : \"relu\"", "\"type\" : \"rleu\"");
        var e3 = assertThrows(IrException.class, () -> ProgramJson.fromJson(json, "model.json"));
        assertTrue(e3.getMessage().contains("unknown op type 'rleu'"), e3.getMessage());
    }
}
