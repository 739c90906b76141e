package org.fleet4j.gpu.exec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * One small program per op instance that the GPU kernel table runs, with fixed random inputs: the same program runs on
 * the CPU executor and on the GPU executor, and every fetched output must agree (GpuOpsAgainstCpuTest).
 */
final class GpuOpCases {

    /** {@code feed}: inputs by var name (copied before each run, since in-place ops write into them). */
    /** {@code tolerance}: relative to the larger of 1 and the CPU's value. */
    record Case(String name, Program program, Map<String, Tensor> feed, List<String> fetch, float tolerance) {
        @Override
        public String toString() {
            return name;
        }
    }

    private final SplittableRandom random = new SplittableRandom(7);
    private final List<Case> cases = new ArrayList<>();

    private GpuOpCases() {
    }

    /** Builds a one-op program; inputs are created as vars of their tensor's dtype and shape, then fed. */
    private final class Builder {
        private final Program program = new Program();
        private final Block block = program.globalBlock();
        private final Map<String, Tensor> feed = new LinkedHashMap<>();
        private final Map<String, List<String>> in = new LinkedHashMap<>();
        private final Map<String, List<String>> out = new LinkedHashMap<>();
        private final List<String> fetch = new ArrayList<>();

        Builder in(String slot, String var, Tensor value) {
            if (!block.hasVar(var)) {
                block.createVar(var, value.dtype(), value.shape());
                feed.put(var, value);
            }
            in.computeIfAbsent(slot, s -> new ArrayList<>()).add(var);
            return this;
        }

        Builder out(String slot, String var) {
            out.computeIfAbsent(slot, s -> new ArrayList<>()).add(var);
            if (!fetch.contains(var)) {
                fetch.add(var);
            }
            return this;
        }

        void add(String name, String type, Map<String, Object> attrs) {
            add(name, type, attrs, 2e-5f);
        }

        void add(String name, String type, Map<String, Object> attrs, float tolerance) {
            block.appendOp(type, in, out, attrs);
            cases.add(new Case(name, program, feed, fetch, tolerance));
        }
    }

    private Tensor uniform(float lo, float hi, long... shape) {
        Tensor t = Tensor.zeros(shape);
        for (long i = 0; i < t.numel(); i++) {
            t.setFloat(i, (float) (lo + (hi - lo) * random.nextDouble()));
        }
        return t;
    }

    private Tensor rand(long... shape) {
        return uniform(-1f, 1f, shape);
    }

    private Tensor labels(long rows, int classes) {
        Tensor t = Tensor.zeros(DType.I64, rows, 1);
        for (long i = 0; i < rows; i++) {
            t.setLong(i, random.nextInt(classes));
        }
        return t;
    }

    static List<Case> all() {
        GpuOpCases c = new GpuOpCases();
        c.dense();
        c.optimizers();
        c.fused();
        c.amp();
        c.layers();
        c.conditional();
        c.overlappedAllreduce();
        return c.cases;
    }

    private void dense() {
        for (boolean tx : new boolean[]{false, true}) {
            for (boolean ty : new boolean[]{false, true}) {
                Map<String, Object> attrs = Map.of("transpose_X", tx, "transpose_Y", ty, "alpha", 1.5f);
                Tensor x = tx ? rand(7, 5) : rand(5, 7);
                Tensor y = ty ? rand(3, 7) : rand(7, 3);
                String t = "tx=" + tx + " ty=" + ty;
                new Builder().in("X", "x", x).in("Y", "y", y).out("Out", "out").add("matmul " + t, "matmul", attrs);
                new Builder().in("X", "x", x).in("Y", "y", y).in("Out", "out", rand(5, 3))
                        .in("Out@GRAD", "dout", rand(5, 3)).out("X@GRAD", "dx").out("Y@GRAD", "dy")
                        .add("matmul_grad " + t, "matmul_grad", attrs);
            }
        }
        new Builder().in("X", "x", rand(2, 4, 6)).in("Y", "y", rand(6, 3)).out("Out", "out")
                .add("matmul with X of rank 3", "matmul", Map.of());
        for (String kind : List.of("add", "sub", "mul", "div")) {
            Tensor y = kind.equals("div") ? uniform(0.5f, 2f, 6) : rand(6);
            new Builder().in("X", "x", rand(4, 6)).in("Y", "y", y).out("Out", "out")
                    .add("elementwise_" + kind + " bias row", "elementwise_" + kind, Map.of());
        }
        new Builder().in("X", "x", rand(4, 6)).in("Y", "y", rand(4, 6)).out("Out", "out")
                .add("elementwise_add same shape", "elementwise_add", Map.of());
        // AMP scales the scalar loss (shape []) by @LOSS_SCALING@ (shape [1]): Y of one element broadcasts over any X
        new Builder().in("X", "x", Tensor.scalar(0.75f)).in("Y", "y", Tensor.of(new float[]{1024f}, 1)).out("Out", "out")
                .add("elementwise_mul of a scalar by a one-element Y", "elementwise_mul", Map.of());
        new Builder().in("X", "x", rand(4, 6)).in("Y", "y", Tensor.of(new float[]{-0.5f}, 1)).out("Out", "out")
                .add("elementwise_mul of a matrix by a one-element Y", "elementwise_mul", Map.of());
        new Builder().in("X", "x", rand(4, 6)).in("Y", "y", rand(6)).in("Out", "out", rand(4, 6))
                .in("Out@GRAD", "dout", rand(4, 6)).out("X@GRAD", "dx").out("Y@GRAD", "dy")
                .add("elementwise_add_grad bias row", "elementwise_add_grad", Map.of());
        for (String act : List.of("relu", "sigmoid", "tanh", "gelu")) {
            Tensor x = rand(4, 6);
            new Builder().in("X", "x", x).out("Out", "out").add(act, act, Map.of());
            new Builder().in("X", "x", x).in("Out", "out", rand(4, 6)).in("Out@GRAD", "dout", rand(4, 6))
                    .out("X@GRAD", "dx").add(act + "_grad", act + "_grad", Map.of());
        }
        for (boolean after : new boolean[]{true, false}) {
            new Builder().in("X", "x", rand(4, 6)).out("Out", "out").add("scale bias_after_scale=" + after, "scale",
                    Map.of("scale", 0.3f, "bias", 1.7f, "bias_after_scale", after));
        }
        new Builder().in("X", "x", rand(4, 6)).in("Out", "out", rand(4, 6)).in("Out@GRAD", "dout", rand(4, 6))
                .out("X@GRAD", "dx").add("scale_grad", "scale_grad", Map.of("scale", 0.3f));
        Tensor label = labels(6, 10);
        label.setLong(2, 3); // a row at ignore_index
        Map<String, Object> ignore3 = Map.of("ignore_index", 3);
        new Builder().in("Logits", "logits", uniform(-4f, 4f, 6, 10)).in("Label", "label", label)
                .out("Softmax", "softmax").out("Loss", "loss").add("softmax_with_cross_entropy", "softmax_with_cross_entropy",
                        ignore3);
        new Builder().in("Logits", "logits", rand(6, 10)).in("Label", "label", label)
                .in("Softmax", "softmax", uniform(0f, 1f, 6, 10)).in("Loss", "loss", rand(6, 1))
                .in("Loss@GRAD", "dloss", rand(6, 1)).out("Logits@GRAD", "dlogits")
                .add("softmax_with_cross_entropy_grad", "softmax_with_cross_entropy_grad", ignore3);
        new Builder().in("X", "x", rand(300, 7)).out("Out", "out").add("mean over several blocks", "mean", Map.of());
        new Builder().in("X", "x", rand(4, 6)).in("Out", "out", Tensor.scalar(0.3f)).in("Out@GRAD", "dout", Tensor.scalar(1.7f))
                .out("X@GRAD", "dx").add("mean_grad", "mean_grad", Map.of());
        new Builder().in("Out", "scores", rand(40, 5)).in("Label", "label", labels(40, 5)).out("Accuracy", "acc")
                .out("Correct", "correct").out("Total", "total").add("accuracy", "accuracy", Map.of());
        new Builder().out("Out", "out").add("fill_constant float32", "fill_constant",
                Map.of("shape", new long[]{3, 4}, "dtype", "float32", "value", 2.5f));
    }

    private void optimizers() {
        new Builder().in("X", "x", Tensor.of(new float[]{1.5f}, 1)).out("Out", "x").add("increment float32", "increment",
                Map.of("step", 2f));
        new Builder().in("X", "x", Tensor.ofLongs(new long[]{41}, 1)).out("Out", "y").add("increment int64 into another var",
                "increment", Map.of("step", 1f));
        new Builder().in("Step", "step", Tensor.ofLongs(new long[]{5}, 1)).out("LearningRate", "lr")
                .add("lr_schedule constant", "lr_schedule", Map.of("base_lr", 0.125f));
        Tensor lr = Tensor.of(new float[]{0.1f}, 1);
        new Builder().in("Param", "p", rand(4, 6)).in("Grad", "g", rand(4, 6)).in("LearningRate", "lr", lr)
                .out("ParamOut", "p").add("sgd with weight decay", "sgd", Map.of("weight_decay", 0.01f));
        for (boolean nesterov : new boolean[]{false, true}) {
            new Builder().in("Param", "p", rand(4, 6)).in("Grad", "g", rand(4, 6)).in("Velocity", "v", rand(4, 6))
                    .in("LearningRate", "lr", lr).out("ParamOut", "p").out("VelocityOut", "v")
                    .add("momentum nesterov=" + nesterov, "momentum", Map.of("mu", 0.9f, "use_nesterov", nesterov));
        }
        for (String type : List.of("adam", "adamw")) {
            Map<String, Object> attrs = type.equals("adam") ? Map.of() : Map.of("coeff", 0.02f);
            new Builder().in("Param", "p", rand(4, 6)).in("Grad", "g", rand(4, 6)).in("LearningRate", "lr", lr)
                    .in("Moment1", "m1", rand(4, 6)).in("Moment2", "m2", uniform(0f, 1f, 4, 6))
                    .in("Beta1Pow", "b1", Tensor.of(new float[]{0.81f}, 1)).in("Beta2Pow", "b2", Tensor.of(new float[]{0.998f}, 1))
                    .out("ParamOut", "p").out("Moment1Out", "m1").out("Moment2Out", "m2").out("Beta1PowOut", "b1")
                    .out("Beta2PowOut", "b2").add(type, type, attrs);
        }
    }

    private void fused() {
        for (String act : List.of("relu", "sigmoid", "tanh")) {
            Map<String, Object> attrs = Map.of("functor", act);
            new Builder().in("X", "x", rand(4, 6)).in("Y", "y", rand(6)).out("Out", "out")
                    .add("fused_elemwise_add_activation " + act, "fused_elemwise_add_activation", attrs);
            Tensor outValue = act.equals("relu") ? rand(4, 6) : uniform(0.05f, 0.95f, 4, 6);
            new Builder().in("X", "x", rand(4, 6)).in("Y", "y", rand(6)).in("Out", "out", outValue)
                    .in("Out@GRAD", "dout", rand(4, 6)).out("X@GRAD", "dx").out("Y@GRAD", "dy")
                    .add("fused_elemwise_add_activation_grad " + act, "fused_elemwise_add_activation_grad", attrs);
        }
        new Builder().in("X", "x", rand(4, 6)).in("Y", "y", rand(6)).in("Out", "out", rand(4, 6))
                .in("Out@GRAD", "dout", rand(4, 6)).out("Y@GRAD", "dy")
                .add("fused_elemwise_add_activation_grad relu, Y@GRAD only", "fused_elemwise_add_activation_grad",
                        Map.of("functor", "relu"));
        Tensor lr = Tensor.of(new float[]{0.1f}, 1);
        new Builder().in("Param", "p0", rand(4, 6)).in("Param", "p1", rand(6)).in("Grad", "g0", rand(4, 6))
                .in("Grad", "g1", rand(6)).in("LearningRate", "lr", lr).out("ParamOut", "p0").out("ParamOut", "p1")
                .add("fused_sgd of two parameters", "fused_sgd", Map.of());
        Builder momentum = new Builder();
        Builder adam = new Builder();
        for (int j = 0; j < 2; j++) {
            long[] shape = j == 0 ? new long[]{4, 6} : new long[]{6};
            momentum.in("Param", "p" + j, rand(shape)).in("Grad", "g" + j, rand(shape)).in("Velocity", "v" + j, rand(shape))
                    .out("ParamOut", "p" + j).out("VelocityOut", "v" + j);
            adam.in("Param", "p" + j, rand(shape)).in("Grad", "g" + j, rand(shape)).in("Moment1", "m1_" + j, rand(shape))
                    .in("Moment2", "m2_" + j, uniform(0f, 1f, shape))
                    .in("Beta1Pow", "b1_" + j, Tensor.of(new float[]{0.9f}, 1))
                    .in("Beta2Pow", "b2_" + j, Tensor.of(new float[]{0.999f}, 1))
                    .out("ParamOut", "p" + j).out("Moment1Out", "m1_" + j).out("Moment2Out", "m2_" + j)
                    .out("Beta1PowOut", "b1_" + j).out("Beta2PowOut", "b2_" + j);
        }
        momentum.in("LearningRate", "lr", lr).add("fused_momentum of two parameters", "fused_momentum", Map.of());
        adam.in("LearningRate", "lr", lr).add("fused_adam of two parameters", "fused_adam", Map.of("coeff", 0.01f));
        new Builder().in("X", "g0", rand(2, 3)).in("X", "g1", rand(4)).out("Out", "g0").out("Out", "g1")
                .out("Bucket", "bucket").add("gather_bucket", "gather_bucket", Map.of());
    }

    private Tensor bf16(Tensor f32) {
        Tensor t = Tensor.zeros(DType.BF16, f32.shape());
        for (long i = 0; i < f32.numel(); i++) {
            t.setFloat(i, f32.getFloat(i));
        }
        return t;
    }

    private static Tensor longs(long... values) {
        return Tensor.ofLongs(values, values.length);
    }

    /** The ops of the amp and bfloat16-allreduce passes; bfloat16 GEMMs may round one product to the next bf16 value. */
    private void amp() {
        Tensor x = rand(5, 7);
        x.setFloat(3, 1e30f); // beyond bfloat16's precision, inside its range
        new Builder().in("X", "x", x).out("Out", "out").add("cast float32 to bfloat16", "cast",
                Map.of("out_dtype", "bfloat16"));
        new Builder().in("X", "x", bf16(rand(5, 7))).out("Out", "out").add("cast bfloat16 to float32", "cast",
                Map.of("out_dtype", "float32"));
        new Builder().in("X", "x", rand(5, 7)).in("Out", "out", bf16(rand(5, 7))).in("Out@GRAD", "dout", bf16(rand(5, 7)))
                .out("X@GRAD", "dx").add("cast_grad bfloat16 back to float32", "cast_grad", Map.of("out_dtype", "bfloat16"));
        new Builder().in("X", "x", rand(3, 4)).out("Out", "out").add("allreduce_cast to bfloat16", "allreduce_cast",
                Map.of("out_dtype", "bfloat16"));
        new Builder().in("X", "x", bf16(rand(3, 4))).out("Out", "out").add("allreduce_cast to float32", "allreduce_cast",
                Map.of("out_dtype", "float32"));
        Tensor inf = rand(4, 6);
        inf.setFloat(7, Float.POSITIVE_INFINITY);
        for (boolean finite : new boolean[]{true, false}) {
            new Builder().in("X", "g0", rand(4, 6)).in("X", "g1", finite ? rand(300) : inf)
                    .in("Scale", "scale", Tensor.of(new float[]{1024f}, 1)).out("Out", "g0").out("Out", "g1")
                    .out("FoundInfinite", "found")
                    .add("check_finite_and_unscale " + (finite ? "finite" : "with inf"), "check_finite_and_unscale",
                            Map.of());
        }
        Map<String, Object> rule = Map.of("incr_every_n_steps", 3, "decr_every_n_nan_or_inf", 2, "incr_ratio", 2f,
                "decr_ratio", 0.5f);
        long[][] states = {{0, 0, 0}, {0, 2, 0}, {1, 0, 0}, {1, 0, 1}, {0, 2, 0}};
        float[] scales = {1024f, 1024f, 1024f, 1.5f, 3e38f};
        for (int k = 0; k < states.length; k++) {
            new Builder().in("FoundInfinite", "found", longs(states[k][0]))
                    .in("PrevLossScaling", "scale", Tensor.of(new float[]{scales[k]}, 1))
                    .in("InGoodSteps", "good", longs(states[k][1])).in("InBadSteps", "bad", longs(states[k][2]))
                    .out("LossScaling", "scale").out("OutGoodSteps", "good").out("OutBadSteps", "bad")
                    .add("update_loss_scaling found=" + states[k][0] + " good=" + states[k][1] + " bad=" + states[k][2]
                            + " scale=" + scales[k], "update_loss_scaling", rule);
        }
        new Builder().in("X", "x", longs(0, 1, 5)).out("Out", "out").add("logical_not", "logical_not", Map.of());
        new Builder().in("X", "x", Tensor.of(new float[]{2.5f}, 1)).in("Y", "y", Tensor.of(new float[]{1024f}, 1))
                .in("Out", "out", rand(1)).in("Out@GRAD", "dout", Tensor.of(new float[]{1f}, 1)).out("X@GRAD", "dx")
                .add("elementwise_mul_grad of the loss scaling", "elementwise_mul_grad", Map.of());
        new Builder().in("X", "x", rand(4, 6)).in("Y", "y", rand(6)).in("Out", "out", rand(4, 6))
                .in("Out@GRAD", "dout", rand(4, 6)).out("X@GRAD", "dx").out("Y@GRAD", "dy")
                .add("elementwise_mul_grad bias row", "elementwise_mul_grad", Map.of());
        new Builder().in("X", "x", Tensor.scalar(2.5f)).in("Y", "y", Tensor.of(new float[]{1024f}, 1))
                .in("Out", "out", rand(1)).in("Out@GRAD", "dout", Tensor.of(new float[]{1f}, 1)).out("X@GRAD", "dx")
                .out("Y@GRAD", "dy").add("elementwise_mul_grad of a scalar by a one-element Y", "elementwise_mul_grad", Map.of());
        for (boolean tx : new boolean[]{false, true}) {
            for (boolean ty : new boolean[]{false, true}) {
                Map<String, Object> attrs = Map.of("transpose_X", tx, "transpose_Y", ty, "alpha", 1f);
                Tensor a = bf16(tx ? rand(40, 16) : rand(16, 40));
                Tensor b = bf16(ty ? rand(24, 40) : rand(40, 24));
                String t = "tx=" + tx + " ty=" + ty;
                new Builder().in("X", "x", a).in("Y", "y", b).out("Out", "out")
                        .add("matmul bfloat16 " + t, "matmul", attrs, 1e-2f);
                new Builder().in("X", "x", a).in("Y", "y", b).in("Out", "out", bf16(rand(16, 24)))
                        .in("Out@GRAD", "dout", bf16(rand(16, 24))).out("X@GRAD", "dx").out("Y@GRAD", "dy")
                        .add("matmul_grad bfloat16 " + t, "matmul_grad", attrs, 1e-2f);
            }
        }
    }

    private void layers() {
        Tensor ids = longs(3, 0, 7, 3, 9, 2);
        for (long pad : new long[]{-1, 3}) {
            new Builder().in("W", "w", rand(10, 5)).in("Ids", "ids", ids).out("Out", "out")
                    .add("lookup_table padding_idx=" + pad, "lookup_table", Map.of("padding_idx", pad));
            new Builder().in("W", "w", rand(10, 5)).in("Ids", "ids", ids).in("Out", "out", rand(6, 5))
                    .in("Out@GRAD", "dout", rand(6, 5)).out("W@GRAD", "dw")
                    .add("lookup_table_grad dense, repeated ids, padding_idx=" + pad, "lookup_table_grad",
                            Map.of("padding_idx", pad, "is_sparse", false));
        }
        Tensor column = Tensor.ofLongs(new long[]{4, 1, 1}, 3, 1);
        new Builder().in("W", "w", rand(6, 8)).in("Ids", "ids", column).out("Out", "out")
                .add("lookup_table with ids [N, 1]", "lookup_table", Map.of());
        Object[][] shapes = {{new long[]{8, 3}, "NCHW"}, {new long[]{4, 3, 5, 5}, "NCHW"}, {new long[]{4, 5, 5, 3}, "NHWC"}};
        for (Object[] sh : shapes) {
            long[] xs = (long[]) sh[0];
            String layout = (String) sh[1];
            for (boolean test : new boolean[]{false, true}) {
                String name = layout + " " + org.fleet4j.core.tensor.Shapes.str(xs) + (test ? " test" : " training");
                Map<String, Object> attrs = Map.of("is_test", test, "data_layout", layout, "momentum", 0.9f,
                        "epsilon", 1e-5f);
                new Builder().in("X", "x", uniform(-2f, 3f, xs)).in("Scale", "scale", uniform(0.5f, 1.5f, 3))
                        .in("Bias", "bias", rand(3)).in("Mean", "mean", rand(3)).in("Variance", "var", uniform(0.5f, 2f, 3))
                        .out("Y", "y").out("MeanOut", "mean").out("VarianceOut", "var").out("SavedMean", "saved_mean")
                        .out("SavedVariance", "saved_inv_std").add("batch_norm " + name, "batch_norm", attrs, 1e-4f);
                new Builder().in("X", "x", uniform(-2f, 3f, xs)).in("Scale", "scale", uniform(0.5f, 1.5f, 3))
                        .in("Bias", "bias", rand(3)).in("SavedMean", "saved_mean", rand(3))
                        .in("SavedVariance", "saved_inv_std", uniform(0.5f, 2f, 3)).in("Y", "y", rand(xs))
                        .in("Y@GRAD", "dy", rand(xs)).out("X@GRAD", "dx").out("Scale@GRAD", "dscale")
                        .out("Bias@GRAD", "dbias").add("batch_norm_grad " + name, "batch_norm_grad", attrs, 1e-4f);
            }
        }
        new Builder().in("X", "x", rand(8, 3)).in("Scale", "scale", uniform(0.5f, 1.5f, 3)).in("Bias", "bias", rand(3))
                .in("SavedMean", "saved_mean", rand(3)).in("SavedVariance", "saved_inv_std", uniform(0.5f, 2f, 3))
                .in("Y", "y", rand(8, 3)).in("Y@GRAD", "dy", rand(8, 3)).out("X@GRAD", "dx")
                .add("batch_norm_grad dX only", "batch_norm_grad", Map.of("is_test", false), 1e-4f);
        for (String impl : List.of("upscale_in_train", "downgrade_in_infer")) {
            new Builder().in("X", "x", rand(4, 6)).out("Out", "out").out("Mask", "mask")
                    .add("dropout at test time " + impl, "dropout", Map.of("is_test", true, "dropout_prob", 0.3f,
                            "dropout_implementation", impl));
        }
        Tensor mask = rand(4, 6);
        for (long i = 0; i < mask.numel(); i++) {
            mask.setFloat(i, i % 3 == 0 ? 0f : 2f);
        }
        new Builder().in("X", "x", rand(4, 6)).in("Mask", "mask", mask).in("Out", "out", rand(4, 6))
                .in("Out@GRAD", "dout", rand(4, 6)).out("X@GRAD", "dx").add("dropout_grad", "dropout_grad", Map.of());
    }

    /**
     * The overlap pass's pair on ring 0 (which the test registers: a single-rank host group), a sum over one rank: on
     * the GPU without a device group the start runs as a synchronous host allreduce and c_wait does nothing.
     */
    private void overlappedAllreduce() {
        Program program = new Program();
        Block b = program.globalBlock();
        Map<String, Tensor> feed = new LinkedHashMap<>();
        feed.put("g", rand(4, 6));
        b.createVar("g", DType.F32, 4, 6);
        b.createVar("work", DType.I64, 1);
        Map<String, Object> ring = Map.of("ring_id", 0, "reduce", "sum");
        b.appendOp("c_allreduce_start", Map.of("X", List.of("g")), Map.of("Out", List.of("g"), "Work", List.of("work")),
                ring);
        b.appendOp("c_wait", Map.of("X", List.of("g"), "Work", List.of("work")), Map.of("Out", List.of("g")),
                Map.of("ring_id", 0));
        cases.add(new Case("c_allreduce_start and c_wait on one rank", program, feed, List.of("g"), 0f));
    }

    /** sgd between conditional_begin and conditional_end: the update runs only when the condition holds. */
    private void conditional() {
        for (long cond : new long[]{0, 1}) {
            Program program = new Program();
            Block b = program.globalBlock();
            Map<String, Tensor> feed = new LinkedHashMap<>();
            feed.put("cond", longs(cond));
            feed.put("p", rand(4, 6));
            feed.put("g", rand(4, 6));
            feed.put("lr", Tensor.of(new float[]{0.1f}, 1));
            feed.forEach((name, t) -> b.createVar(name, t.dtype(), t.shape()));
            b.appendOp("conditional_begin", Map.of("Cond", List.of("cond")), Map.of(), Map.of());
            b.appendOp("sgd", Map.of("Param", List.of("p"), "Grad", List.of("g"), "LearningRate", List.of("lr")),
                    Map.of("ParamOut", List.of("p")), Map.of());
            b.appendOp("conditional_end", Map.of(), Map.of(), Map.of());
            cases.add(new Case("sgd inside conditional_begin/end, cond=" + cond, program, feed, List.of("p"), 2e-5f));
        }
    }
}
