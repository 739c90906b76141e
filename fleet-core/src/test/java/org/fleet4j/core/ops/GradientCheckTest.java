package org.fleet4j.core.ops;

import static org.fleet4j.core.ops.TestTensors.awayFromZero;
import static org.fleet4j.core.ops.TestTensors.range;
import static org.fleet4j.core.ops.TestTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Set;
import java.util.TreeSet;
import org.fleet4j.core.autodiff.GradientChecker;
import org.fleet4j.core.autodiff.GradientChecker.Result;
import org.fleet4j.core.ops.fused.FusedBnActOp;
import org.fleet4j.core.ops.fused.FusedElewiseAddActOp;
import org.fleet4j.core.ops.fused.FusedReluDepthwiseConvOp;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Every differentiable op's gradient kernel against central finite differences. */
class GradientCheckTest {
    /** The ops this class checks; a new differentiable op fails {@link #everyDifferentiableOpIsChecked} until added. */
    private static final Set<String> CHECKED = Set.of("matmul", "elementwise_add", "elementwise_sub", "elementwise_mul",
            "elementwise_div", "relu", "sigmoid", "tanh", "gelu", "softmax", "scale", "softmax_with_cross_entropy",
            "mean", "sum", "reshape", "concat", "dropout", "lookup_table", "batch_norm", "cast",
            FusedBnActOp.TYPE, FusedElewiseAddActOp.TYPE, "conv2d", "depthwise_conv2d", "conv2d_transpose", "pool2d",
            "group_norm",
            // ConvGradientCheckTest checks these
            FusedReluDepthwiseConvOp.TYPE,
            // TransformerGradientCheckTest checks these
            "layer_norm", "silu", "leaky_relu", "hard_swish", "log_softmax", "transpose", "flatten", "squeeze",
            "unsqueeze", "slice", "split", "stack", "expand", "where", "tril_triu", "self_attention",
            "fused_gemm_epilogue");

    @Test
    void everyDifferentiableOpIsChecked() {
        Set<String> differentiable = new TreeSet<>();
        for (String t : OpRegistry.types()) {
            if (t.endsWith("_grad") && !t.startsWith("test_")) {
                differentiable.add(t.substring(0, t.length() - "_grad".length()));
            }
        }
        assertEquals(new TreeSet<>(CHECKED), differentiable,
                "a differentiable op without a gradient check here: add one (and the op to CHECKED)");
    }

    private static Result check(GradientChecker c) {
        Result r = c.check();
        assertEquals(r.inputs().size(), r.inputs().stream().map(e -> e.slot() + e.position()).distinct().count());
        return r;
    }

    @ParameterizedTest
    @CsvSource({"false,false", "false,true", "true,false", "true,true"})
    void matmulAllTransposeCombinations(boolean tx, boolean ty) {
        Tensor x = uniform(1, tx ? 4 : 3, tx ? 3 : 4);
        Tensor y = uniform(2, ty ? 5 : 4, ty ? 4 : 5);
        Result r = check(GradientChecker.forOp("matmul").input("X", x).input("Y", y)
                .attr("transpose_X", tx).attr("transpose_Y", ty).attr("alpha", 1.5f));
        assertEquals(2, r.inputs().size(), "both X and Y are checked");
    }

    @ParameterizedTest
    @CsvSource({"false,false", "false,true", "true,false", "true,true"})
    void matmulBatched(boolean tx, boolean ty) {
        Tensor x = uniform(3, 2, tx ? 4 : 3, tx ? 3 : 4);
        Tensor y = uniform(4, 2, ty ? 5 : 4, ty ? 4 : 5);
        check(GradientChecker.forOp("matmul").input("X", x).input("Y", y)
                .attr("transpose_X", tx).attr("transpose_Y", ty));
    }

    @Test
    void matmulWithFlattenedBatchDims() {
        check(GradientChecker.forOp("matmul").input("X", uniform(5, 2, 3, 4)).input("Y", uniform(6, 4, 2)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div"})
    void elementwiseBroadcasts(String type) {
        // same shape, row broadcast (bias), general broadcast both ways, and Paddle's axis
        check(GradientChecker.forOp(type).input("X", uniform(7, 3, 4)).input("Y", range(8, 0.5, 1.5, 3, 4)));
        check(GradientChecker.forOp(type).input("X", uniform(9, 3, 4)).input("Y", range(10, 0.5, 1.5, 4)));
        check(GradientChecker.forOp(type).input("X", uniform(11, 3, 1)).input("Y", range(12, 0.5, 1.5, 1, 4)));
        check(GradientChecker.forOp(type).input("X", uniform(13, 2, 3, 4)).input("Y", range(14, 0.5, 1.5, 3, 1)));
        check(GradientChecker.forOp(type).input("X", uniform(15, 2, 3, 4)).input("Y", range(16, 0.5, 1.5, 3))
                .attr("axis", 1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"relu", "sigmoid", "tanh", "gelu", "softmax"})
    void activations(String type) {
        check(GradientChecker.forOp(type).input("X", awayFromZero(17, 3, 5)));
    }

    @Test
    void cast() {
        // to float32: finite differences cannot see through bfloat16 rounding (CastOpsTest covers the bf16 gradient)
        check(GradientChecker.forOp("cast").input("X", uniform(31, 3, 4)).attr("out_dtype", "float32"));
    }

    @Test
    void scale() {
        check(GradientChecker.forOp("scale").input("X", uniform(18, 2, 3)).attr("scale", -2.5f).attr("bias", 0.5f));
        check(GradientChecker.forOp("scale").input("X", uniform(19, 4)).attr("scale", 3f).attr("bias", 1f)
                .attr("bias_after_scale", false));
    }

    @Test
    void softmaxWithCrossEntropy() {
        Tensor label = Tensor.ofLongs(new long[]{2, 0, 4, 1}, 4, 1);
        Result r = check(GradientChecker.forOp("softmax_with_cross_entropy").input("Logits", uniform(20, 4, 5))
                .input("Label", label).lossFrom("Loss"));
        assertEquals("Logits", r.inputs().get(0).slot(), "Label is an integer input and is not checked");
        Tensor withIgnored = Tensor.ofLongs(new long[]{2, -100, 4}, 3);
        check(GradientChecker.forOp("softmax_with_cross_entropy").input("Logits", uniform(21, 3, 5))
                .input("Label", withIgnored).lossFrom("Loss"));
    }

    @Test
    void meanAndSum() {
        check(GradientChecker.forOp("mean").input("X", uniform(22, 3, 4)));
        Result r = check(GradientChecker.forOp("sum").input("X", uniform(23, 2, 3), uniform(24, 2, 3), uniform(25, 2, 3)));
        assertEquals(3, r.inputs().size(), "every input of the variadic slot is checked");
    }

    @Test
    void reshape() {
        check(GradientChecker.forOp("reshape").input("X", uniform(26, 2, 3, 4)).attr("shape", new long[]{0, -1}));
        check(GradientChecker.forOp("reshape").input("X", uniform(27, 6, 2)).attr("shape", new long[]{3, 4}));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, -1})
    void concat(int axis) {
        Tensor a = uniform(28, 2, 3);
        Tensor b = axis == 0 ? uniform(29, 4, 3) : uniform(29, 2, 5);
        Tensor c = axis == 0 ? uniform(30, 1, 3) : uniform(30, 2, 1);
        Result r = check(GradientChecker.forOp("concat").input("X", a, b, c).attr("axis", axis));
        assertEquals(3, r.inputs().size());
    }

    @Test
    void concatMiddleAxisOf3d() {
        check(GradientChecker.forOp("concat").input("X", uniform(31, 2, 1, 3), uniform(32, 2, 2, 3)).attr("axis", 1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"upscale_in_train", "downgrade_in_infer"})
    void dropoutWithItsFixedMask(String impl) {
        check(GradientChecker.forOp("dropout").input("X", uniform(33, 4, 6)).attr("dropout_prob", 0.4f)
                .attr("seed", 99L).attr("dropout_implementation", impl));
        check(GradientChecker.forOp("dropout").input("X", uniform(34, 4, 6)).attr("dropout_prob", 0.4f)
                .attr("is_test", true).attr("dropout_implementation", impl));
    }

    @Test
    void lookupTableDense() {
        Tensor ids = Tensor.ofLongs(new long[]{3, 0, 3, 5, 1}, 5, 1);
        check(GradientChecker.forOp("lookup_table").input("W", uniform(35, 6, 4)).input("Ids", ids));
        check(GradientChecker.forOp("lookup_table").input("W", uniform(36, 6, 4)).input("Ids", ids)
                .attr("padding_idx", 3L));
        check(GradientChecker.forOp("lookup_table").input("W", uniform(37, 6, 4))
                .input("Ids", Tensor.ofInts(new int[]{2, 2, 4}, 3)));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void batchNorm(boolean isTest) {
        Tensor mean = Tensor.of(new float[]{0.1f, -0.2f, 0.3f}, 3);
        Tensor var = Tensor.of(new float[]{0.5f, 1.5f, 0.8f}, 3);
        check(GradientChecker.forOp("batch_norm").input("X", uniform(38, 5, 3))
                .input("Scale", range(39, 0.5, 1.5, 3)).input("Bias", uniform(40, 3))
                .input("Mean", mean).input("Variance", var).attr("is_test", isTest));
        check(GradientChecker.forOp("batch_norm").input("X", uniform(41, 2, 3, 2, 2))
                .input("Scale", range(42, 0.5, 1.5, 3)).input("Bias", uniform(43, 3))
                .input("Mean", mean).input("Variance", var).attr("is_test", isTest));
        check(GradientChecker.forOp("batch_norm").input("X", uniform(44, 2, 2, 2, 3))
                .input("Scale", range(45, 0.5, 1.5, 3)).input("Bias", uniform(46, 3))
                .input("Mean", mean).input("Variance", var).attr("is_test", isTest).attr("data_layout", "NHWC"));
    }

    @Test
    void fusedBatchNormAndActivation() {
        check(GradientChecker.forOp(FusedBnActOp.TYPE).input("X", uniform(47, 6, 3))
                .input("Scale", range(48, 0.5, 1.5, 3)).input("Bias", uniform(49, 3))
                .input("Mean", Tensor.of(new float[]{0.1f, -0.2f, 0.3f}, 3))
                .input("Variance", Tensor.of(new float[]{0.5f, 1.5f, 0.8f}, 3)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"relu", "sigmoid", "tanh", "scale"})
    void fusedAddAndActivation(String functor) {
        check(GradientChecker.forOp(FusedElewiseAddActOp.TYPE).input("X", awayFromZero(50, 4, 5))
                .input("Y", uniform(51, 5)).attr("functor", functor).attr("scale", 0.5f));
    }
}
