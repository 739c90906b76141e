package org.fleet4j.core.ops;

import static org.fleet4j.core.ops.TestTensors.awayFromZero;
import static org.fleet4j.core.ops.TestTensors.range;
import static org.fleet4j.core.ops.TestTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.GradientChecker;
import org.fleet4j.core.autodiff.GradientChecker.Result;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The gradients of the transformer's ops against central finite differences (GradientCheckTest lists them). */
class TransformerGradientCheckTest {

    private static Result check(GradientChecker c) {
        return c.check();
    }

    @Test
    void layerNormOverTheLastAxisAndOverTwo() {
        check(GradientChecker.forOp("layer_norm").input("X", uniform(1, 3, 5))
                .input("Scale", range(2, 0.5, 1.5, 5)).input("Bias", uniform(3, 5)));
        check(GradientChecker.forOp("layer_norm").input("X", uniform(4, 2, 3, 4))
                .input("Scale", range(5, 0.5, 1.5, 4)).input("Bias", uniform(6, 4)).attr("begin_norm_axis", 2));
        Result two = check(GradientChecker.forOp("layer_norm").input("X", uniform(7, 2, 3, 4))
                .input("Scale", range(8, 0.5, 1.5, 12)).input("Bias", uniform(9, 12)).attr("begin_norm_axis", 1)
                .attr("epsilon", 1e-3f));
        assertEquals(3, two.inputs().size(), "X, Scale and Bias are checked");
        check(GradientChecker.forOp("layer_norm").input("X", uniform(10, 4, 19)));
    }

    @Test
    void layerNormMeanAndVarianceOutputs() {
        // the loss through Mean and Variance too: their gradients are not propagated, so only Y is differentiated
        Tensor x = Tensor.of(new float[]{1, 2, 3, 4, -1, 0, 1, 2}, 2, 4);
        var a = GradientChecker.forOp("layer_norm").input("X", x).lossFrom("Y", "Mean", "Variance").analytic();
        assertEquals(2.5f, a.outputs().get("Mean").getFloat(0), 1e-6);
        assertEquals(1.25f, a.outputs().get("Variance").getFloat(1), 1e-6);
    }

    @ParameterizedTest
    @CsvSource({"gelu,false", "gelu,true", "silu,false", "leaky_relu,false", "hard_swish,false"})
    void activations(String type, boolean approximate) {
        GradientChecker c = GradientChecker.forOp(type).input("X", awayFromZero(11, 4, 9));
        if (type.equals("gelu")) {
            c.attr("approximate", approximate);
        }
        check(c);
    }

    @Test
    void hardSwishOnEveryPiece() {
        // below -offset (0), the middle, above threshold - offset (1), away from the kinks
        Tensor x = Tensor.of(new float[]{-5f, -3.5f, -2f, -0.5f, 0.7f, 2.5f, 3.5f, 6f}, 8);
        check(GradientChecker.forOp("hard_swish").input("X", x));
        check(GradientChecker.forOp("leaky_relu").input("X", x).attr("alpha", 0.1f));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, -1, -2})
    void softmaxAndLogSoftmaxAlongAnyAxis(int axis) {
        check(GradientChecker.forOp("softmax").input("X", uniform(12, 3, 4, 5)).attr("axis", axis));
        check(GradientChecker.forOp("log_softmax").input("X", uniform(13, 3, 4, 5)).attr("axis", axis));
    }

    @Test
    void longRowsCrossTheVectorTail() {
        check(GradientChecker.forOp("softmax").input("X", uniform(14, 2, 37)));
        check(GradientChecker.forOp("log_softmax").input("X", uniform(15, 2, 37)));
    }

    @ParameterizedTest
    @CsvSource({"false,false", "false,true", "true,false", "true,true"})
    void matmulWithBroadcastBatchDims(boolean tx, boolean ty) {
        // equal batch dims [2, 3]
        check(GradientChecker.forOp("matmul").input("X", uniform(16, 2, 3, tx ? 4 : 2, tx ? 2 : 4))
                .input("Y", uniform(17, 2, 3, ty ? 3 : 4, ty ? 4 : 3)).attr("transpose_X", tx).attr("transpose_Y", ty));
        // X [3, m, k] broadcast over Y's [2, 3]: X's gradient sums over the 2
        check(GradientChecker.forOp("matmul").input("X", uniform(18, 3, tx ? 4 : 2, tx ? 2 : 4))
                .input("Y", uniform(19, 2, 3, ty ? 3 : 4, ty ? 4 : 3)).attr("transpose_X", tx).attr("transpose_Y", ty)
                .attr("alpha", 0.5f));
        // size-1 batch dims on both sides: [2, 1] x [1, 3]
        check(GradientChecker.forOp("matmul").input("X", uniform(20, 2, 1, tx ? 4 : 2, tx ? 2 : 4))
                .input("Y", uniform(21, 1, 3, ty ? 3 : 4, ty ? 4 : 3)).attr("transpose_X", tx).attr("transpose_Y", ty));
        // a matrix Y under batched X: [2, 3, m, k] x [k, n]
        check(GradientChecker.forOp("matmul").input("X", uniform(22, 2, 3, tx ? 4 : 2, tx ? 2 : 4))
                .input("Y", uniform(23, ty ? 3 : 4, ty ? 4 : 3)).attr("transpose_X", tx).attr("transpose_Y", ty));
        // a matrix X under batched Y
        check(GradientChecker.forOp("matmul").input("X", uniform(24, tx ? 4 : 2, tx ? 2 : 4))
                .input("Y", uniform(25, 2, ty ? 3 : 4, ty ? 4 : 3)).attr("transpose_X", tx).attr("transpose_Y", ty));
    }

    @Test
    void transposeFlattenSqueezeUnsqueeze() {
        check(GradientChecker.forOp("transpose").input("X", uniform(26, 2, 3, 4)).attr("axis", new int[]{2, 0, 1}));
        check(GradientChecker.forOp("transpose").input("X", uniform(27, 2, 3, 2, 4))
                .attr("axis", new int[]{0, 2, 1, 3}));
        check(GradientChecker.forOp("transpose").input("X", uniform(28, 3, 5)).attr("axis", new int[]{1, 0}));
        check(GradientChecker.forOp("flatten").input("X", uniform(29, 2, 3, 4)).attr("start_axis", 1)
                .attr("stop_axis", 2));
        check(GradientChecker.forOp("squeeze").input("X", uniform(30, 2, 1, 3, 1)).attr("axes", new int[]{-1}));
        check(GradientChecker.forOp("unsqueeze").input("X", uniform(31, 2, 3)).attr("axes", new int[]{0, -1}));
    }

    @Test
    void sliceWithNegativeAndClampedBounds() {
        check(GradientChecker.forOp("slice").input("Input", uniform(32, 3, 4, 5)).attr("axes", new int[]{0, 2})
                .attr("starts", new long[]{1, -4}).attr("ends", new long[]{3, 100}));
        check(GradientChecker.forOp("slice").input("Input", uniform(33, 4, 6)).attr("axes", new int[]{1})
                .attr("starts", new long[]{-5}).attr("ends", new long[]{-1}));
    }

    @Test
    void splitStackAndExpand() {
        Result r = check(GradientChecker.forOp("split").input("X", uniform(34, 2, 6, 3)).outputs("Out", 3)
                .attr("axis", 1).attr("num", 3));
        assertEquals(1, r.inputs().size());
        check(GradientChecker.forOp("split").input("X", uniform(35, 4, 7)).outputs("Out", 3).attr("axis", -1)
                .attr("sections", new int[]{2, -1, 1}));
        check(GradientChecker.forOp("stack").input("X", uniform(36, 2, 3), uniform(37, 2, 3), uniform(38, 2, 3))
                .attr("axis", 1));
        check(GradientChecker.forOp("stack").input("X", uniform(39, 2, 3), uniform(40, 2, 3)).attr("axis", -1));
        check(GradientChecker.forOp("expand").input("X", uniform(41, 3, 1)).attr("shape", new long[]{2, -1, 4}));
    }

    @Test
    void whereAndTrilTriu() {
        Tensor cond = Tensor.of(new float[]{1, 0, 0, 1, 1, 0}, 2, 3);
        check(GradientChecker.forOp("where").input("Condition", cond).input("X", uniform(42, 2, 3))
                .input("Y", uniform(43, 2, 3)));
        // broadcast: X [3] along rows, Y [2, 1] along columns
        check(GradientChecker.forOp("where").input("Condition", cond).input("X", uniform(44, 3))
                .input("Y", uniform(45, 2, 1)));
        check(GradientChecker.forOp("tril_triu").input("X", uniform(46, 2, 4, 5)));
        check(GradientChecker.forOp("tril_triu").input("X", uniform(47, 4, 5)).attr("lower", false)
                .attr("diagonal", 1));
        check(GradientChecker.forOp("tril_triu").input("X", uniform(48, 4, 5)).attr("diagonal", -2));
    }

    @Test
    void softmaxWithCrossEntropyOverSequencesWithSmoothingAndIgnoredPositions() {
        Tensor label = Tensor.ofLongs(new long[]{2, 0, -100, 4, 1, -100}, 2, 3);
        check(GradientChecker.forOp("softmax_with_cross_entropy").input("Logits", uniform(49, 2, 3, 5))
                .input("Label", label).attr("label_smoothing", 0.1f).lossFrom("Loss"));
        check(GradientChecker.forOp("softmax_with_cross_entropy").input("Logits", uniform(50, 2, 3, 5))
                .input("Label", label).lossFrom("Loss"));
    }

    @ParameterizedTest
    @CsvSource({"true,false", "false,false", "true,true"})
    void selfAttention(boolean causal, boolean padded) {
        // seq 5 and heads of 2: a causal block, the diagonal and the tails of the vectors
        GradientChecker c = GradientChecker.forOp("self_attention").input("QKV", uniform(52, 2, 5, 12))
                .attr("num_heads", 2).attr("scale", 0.7f).attr("causal", causal);
        if (padded) {
            c.input("KeyPadding", Tensor.of(new float[]{1, 1, 1, 0, 0, 1, 1, 1, 1, 1}, 2, 5));
        }
        check(c);
    }

    @Test
    void selfAttentionWithDropoutItsFixedMask() {
        check(GradientChecker.forOp("self_attention").input("QKV", uniform(53, 2, 6, 18)).attr("num_heads", 3)
                .attr("scale", 0.5f).attr("causal", true).attr("dropout_prob", 0.3f).attr("seed", 5L));
    }

    @Test
    void selfAttentionOverLongerSequencesUsesTheCausalBlocks() {
        // seq 40 > one causal block of 32 rows
        check(GradientChecker.forOp("self_attention").input("QKV", uniform(54, 1, 40, 6)).attr("num_heads", 1)
                .attr("scale", 0.5f).attr("causal", true).tolerance(1e-2));
    }

    @ParameterizedTest
    @CsvSource({"false,none", "true,none", "true,gelu", "false,gelu"})
    void fusedGemmEpilogue(boolean transY, String activation) {
        check(GradientChecker.forOp("fused_gemm_epilogue").input("X", uniform(55, 2, 3, 4))
                .input("Y", uniform(56, transY ? 5 : 4, transY ? 4 : 5)).input("Bias", uniform(57, 5))
                .attr("trans_y", transY).attr("activation", activation));
    }

    @Test
    void anUnusedPartOfASplitGetsAZeroGradient() {
        Program p = new Program();
        var b = p.globalBlock();
        Var x = b.createVar("x", DType.F32, 2, 6).setParameter(true);
        b.appendOp("split", Map.of("X", List.of("x")), Map.of("Out", List.of("a", "c", "d")),
                Map.of("num", 3, "axis", 1));
        b.appendOp("sum", Map.of("X", List.of("a", "d")), Map.of("Out", List.of("s")), Map.of());
        b.appendOp("mean", Map.of("X", List.of("s")), Map.of("Out", List.of("loss")), Map.of());
        Backward.appendBackward(b.var("loss"));
        assertTrue(b.ops().stream().anyMatch(op -> op.type().equals("fill_zeros_like")), "c gets zeros");
        Scope scope = new Scope();
        scope.put("x", uniform(51, 2, 6));
        Tensor g = new Executor().run(p, scope, Map.of(), List.of(x.name() + "@GRAD")).get("x@GRAD");
        for (int r = 0; r < 2; r++) {
            for (int c = 0; c < 6; c++) {
                assertEquals(c >= 2 && c < 4 ? 0f : 0.25f, g.getFloat(r * 6 + c), 1e-7, "row " + r + " col " + c);
            }
        }
    }

    @Test
    void shapeErrorsNameTheOpTheInputAndTheFix() {
        Program p = new Program();
        var b = p.globalBlock();
        b.createVar("x", DType.F32, 2, 3, 4);
        b.createVar("y", DType.F32, 3, 5, 4);
        var e = assertThrows(IrException.class, () -> b.appendOp("matmul", Map.of("X", List.of("x"), "Y", List.of("y")),
                Map.of("Out", List.of("o")), Map.of()));
        assertTrue(e.getMessage().contains("matmul(X=x float32[2, 3, 4], Y=y float32[3, 5, 4])")
                && e.getMessage().contains("inner dimensions differ: 4 (X) vs 5 (Y)"), e.getMessage());
        e = assertThrows(IrException.class, () -> b.appendOp("transpose", Map.of("X", List.of("x")),
                Map.of("Out", List.of("t")), Map.of("axis", new int[]{0, 0, 1})));
        assertTrue(e.getMessage().contains("is not a permutation of the 3 dims of X"), e.getMessage());
        e = assertThrows(IrException.class, () -> b.appendOp("layer_norm", Map.of("X", List.of("x"), "Scale",
                List.of("y")), Map.of("Y", List.of("n"), "Mean", List.of("m"), "Variance", List.of("v")),
                Map.of("begin_norm_axis", 2)));
        assertTrue(e.getMessage().contains("Scale [3, 5, 4] must be [4] or [4]"), e.getMessage());
        e = assertThrows(IrException.class, () -> b.appendOp("split", Map.of("X", List.of("x")),
                Map.of("Out", List.of("s0", "s1")), Map.of("num", 2, "axis", 1)));
        assertTrue(e.getMessage().contains("does not divide into num 2 equal parts"), e.getMessage());
        e = assertThrows(IrException.class, () -> b.appendOp("expand", Map.of("X", List.of("x")),
                Map.of("Out", List.of("ex")), Map.of("shape", new long[]{2, 5, 4})));
        assertTrue(e.getMessage().contains("cannot expand to [2, 5, 4]"), e.getMessage());
    }
}
