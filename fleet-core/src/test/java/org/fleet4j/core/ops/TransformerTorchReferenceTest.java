package org.fleet4j.core.ops;

import static org.fleet4j.core.ops.TestTensors.range;
import static org.fleet4j.core.ops.TestTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.fleet4j.core.autodiff.GradientChecker;
import org.fleet4j.core.ops.TorchOpCheck.Measurement;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transformer's ops, forward and backward, against PyTorch on random inputs (float64 the yardstick), in one Python
 * run; with them, planted mistakes (a causal mask off by one diagonal, a wrong transpose of the heads, the other GELU,
 * no label smoothing) that the comparison must catch.
 */
class TransformerTorchReferenceTest {
    @TempDir
    Path dir;

    /** Cases whose PyTorch code deliberately computes something else than the Fleet4J op. */
    private static final Set<String> PLANTED = Set.of("planted_causal_mask_off_by_one", "planted_wrong_head_transpose",
            "planted_exact_vs_tanh_gelu", "planted_smoothing_ignored", "planted_scores_not_scaled",
            "planted_attention_mask_off_by_one", "planted_attention_wrong_value_transpose");

    /**
     * nanoGPT's CausalSelfAttention after c_attn, on QKV [B, T, 3C] with 4 heads; {@code mask} is the line that masks
     * the scores {@code att}, {@code values} the line that makes the heads' values {@code v}.
     */
    private static String nanoGptAttention(String mask, String values) {
        return String.join("\n",
                "B, T, C3 = QKV.shape",
                "C = C3 // 3",
                "q, k, v = QKV.split(C, dim=2)",
                "q = q.view(B, T, 4, C // 4).transpose(1, 2)",
                "k = k.view(B, T, 4, C // 4).transpose(1, 2)",
                values,
                "att = (q @ k.transpose(-2, -1)) * (1.0 / (C // 4) ** 0.5)",
                mask,
                "att = F.softmax(att, dim=-1)",
                "out = (att @ v).transpose(1, 2).contiguous().view(B, T, C)");
    }

    private static final String HEADS = "v = v.view(B, T, 4, C // 4).transpose(1, 2)";
    private static final String CAUSAL = "att = att.masked_fill(torch.tril(torch.ones(T, T)) == 0, float('-inf'))";

    private static GradientChecker attention(long seed, boolean causal) {
        return GradientChecker.forOp("self_attention").input("QKV", uniform(seed, 3, 40, 48)).attr("num_heads", 4)
                .attr("scale", (float) (1 / Math.sqrt(4))).attr("causal", causal);
    }

    /** Key padding of [3, 40]: the last 5 and 12 positions of two sequences are padding. */
    private static Tensor padding() {
        float[] keep = new float[3 * 40];
        for (int t = 0; t < 40; t++) {
            keep[t] = 1;
            keep[40 + t] = t < 35 ? 1 : 0;
            keep[80 + t] = t < 28 ? 1 : 0;
        }
        return Tensor.of(keep, 3, 40);
    }

    @Test
    void transformerOpsMatchPyTorchAndPlantedMistakesAreCaught() {
        Tensor labels = Tensor.ofLongs(new long[]{2, 0, -100, 4, 1, 3, -100, 0}, 2, 4);
        Tensor cond = Tensor.of(new float[]{1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1}, 3, 4);
        List<Measurement> all = TorchOpCheck.cases()
                .add("layer_norm_last", GradientChecker.forOp("layer_norm").input("X", uniform(1, 6, 32))
                        .input("Scale", range(2, 0.5, 1.5, 32)).input("Bias", uniform(3, 32)),
                        "F.layer_norm(X, (32,), Scale, Bias, 1e-5)")
                .add("layer_norm_two_axes", GradientChecker.forOp("layer_norm").input("X", uniform(4, 2, 3, 20))
                        .input("Scale", range(5, 0.5, 1.5, 60)).input("Bias", uniform(6, 60)).attr("begin_norm_axis", 1),
                        "F.layer_norm(X, (3, 20), Scale.view(3, 20), Bias.view(3, 20), 1e-5)")
                .add("gelu_exact", GradientChecker.forOp("gelu").input("X", range(7, -6, 6, 300)), "F.gelu(X)")
                .add("gelu_tanh", GradientChecker.forOp("gelu").input("X", range(8, -6, 6, 300))
                        .attr("approximate", true), "F.gelu(X, approximate='tanh')")
                .add("silu", GradientChecker.forOp("silu").input("X", range(9, -8, 8, 100)), "F.silu(X)")
                .add("leaky_relu", GradientChecker.forOp("leaky_relu").input("X", uniform(10, 100)).attr("alpha", 0.1f),
                        "F.leaky_relu(X, 0.1)")
                .add("hard_swish", GradientChecker.forOp("hard_swish").input("X", range(11, -5, 5, 100)),
                        "F.hardswish(X)")
                .add("softmax_axis1", GradientChecker.forOp("softmax").input("X", uniform(12, 3, 7, 5)).attr("axis", 1),
                        "F.softmax(X, 1)")
                .add("softmax_long_rows", GradientChecker.forOp("softmax").input("X", range(13, -4, 4, 4, 83)),
                        "F.softmax(X, -1)")
                .add("log_softmax_axis0", GradientChecker.forOp("log_softmax").input("X", uniform(14, 3, 7, 5))
                        .attr("axis", 0), "F.log_softmax(X, 0)")
                .add("log_softmax_last", GradientChecker.forOp("log_softmax").input("X", range(15, -4, 4, 6, 50)),
                        "F.log_softmax(X, -1)")
                .add("matmul_heads", GradientChecker.forOp("matmul").input("X", uniform(16, 2, 3, 8, 4))
                        .input("Y", uniform(17, 2, 3, 8, 4)).attr("transpose_Y", true).attr("alpha", 0.5f),
                        "0.5 * X @ Y.transpose(-1, -2)")
                .add("matmul_broadcast_x", GradientChecker.forOp("matmul").input("X", uniform(18, 3, 5, 4))
                        .input("Y", uniform(19, 2, 3, 4, 6)), "X @ Y")
                .add("matmul_sequence_by_matrix", GradientChecker.forOp("matmul").input("X", uniform(20, 2, 5, 8))
                        .input("Y", uniform(21, 8, 6)), "X @ Y")
                .add("matmul_transposed_x_size1", GradientChecker.forOp("matmul").input("X", uniform(22, 2, 1, 4, 5))
                        .input("Y", uniform(23, 1, 3, 4, 6)).attr("transpose_X", true), "X.transpose(-1, -2) @ Y")
                .add("transpose_heads", GradientChecker.forOp("transpose").input("X", uniform(24, 2, 5, 3, 4))
                        .attr("axis", new int[]{0, 2, 1, 3}), "X.permute(0, 2, 1, 3)")
                .add("transpose_any", GradientChecker.forOp("transpose").input("X", uniform(25, 2, 3, 4))
                        .attr("axis", new int[]{2, 0, 1}), "X.permute(2, 0, 1)")
                .add("flatten", GradientChecker.forOp("flatten").input("X", uniform(26, 2, 3, 4, 5))
                        .attr("start_axis", 1).attr("stop_axis", 2), "torch.flatten(X, 1, 2)")
                .add("squeeze", GradientChecker.forOp("squeeze").input("X", uniform(27, 2, 1, 3, 1))
                        .attr("axes", new int[]{1}), "X.squeeze(1)")
                .add("unsqueeze", GradientChecker.forOp("unsqueeze").input("X", uniform(28, 2, 3))
                        .attr("axes", new int[]{1, 2}), "X[:, None, None, :]")
                .add("slice", GradientChecker.forOp("slice").input("Input", uniform(29, 4, 3, 6))
                        .attr("axes", new int[]{0, 2}).attr("starts", new long[]{1, -4}).attr("ends", new long[]{3, 100}),
                        "Input[1:3, :, -4:]")
                .add("split_num", GradientChecker.forOp("split").input("X", uniform(30, 2, 9, 4)).outputs("Out", 3)
                        .attr("num", 3).attr("axis", 1), "torch.split(X, 3, dim=1)")
                .add("split_sections", GradientChecker.forOp("split").input("X", uniform(31, 3, 7)).outputs("Out", 3)
                        .attr("sections", new int[]{2, -1, 1}).attr("axis", -1), "torch.split(X, [2, 4, 1], dim=-1)")
                .add("stack", GradientChecker.forOp("stack").input("X", uniform(32, 2, 3), uniform(33, 2, 3),
                        uniform(34, 2, 3)).attr("axis", 1), "torch.stack(X, 1)")
                .add("expand", GradientChecker.forOp("expand").input("X", uniform(35, 3, 1))
                        .attr("shape", new long[]{2, -1, 4}), "X.expand(2, 3, 4)")
                .add("where", GradientChecker.forOp("where").input("Condition", cond).input("X", uniform(36, 3, 4))
                        .input("Y", uniform(37, 4)), "torch.where(Condition != 0, X, Y)")
                .add("tril", GradientChecker.forOp("tril_triu").input("X", uniform(38, 2, 5, 5)), "torch.tril(X)")
                .add("triu_above_diagonal", GradientChecker.forOp("tril_triu").input("X", uniform(39, 5, 6))
                        .attr("lower", false).attr("diagonal", 1), "torch.triu(X, 1)")
                .add("cross_entropy_sequences", GradientChecker.forOp("softmax_with_cross_entropy")
                        .input("Logits", range(40, -3, 3, 2, 4, 11)).input("Label", labels).attr("label_smoothing", 0.1f)
                        .lossFrom("Loss"), "F.cross_entropy(Logits.reshape(-1, 11), Label.reshape(-1), ignore_index=-100,"
                        + " label_smoothing=0.1, reduction='none').reshape(2, 4, 1)")
                .add("attention_causal", attention(47, true), nanoGptAttention(CAUSAL, HEADS))
                .add("attention_full", attention(48, false), nanoGptAttention("", HEADS))
                .add("attention_key_padding", attention(49, true).input("KeyPadding", padding()),
                        nanoGptAttention(CAUSAL + "\natt = att + (KeyPadding[:, None, None, :] - 1) * 1e9", HEADS))
                // rows in several blocks of the epilogue: 4,096 x 384 outputs
                .add("linear_blocks", GradientChecker.forOp("fused_gemm_epilogue").input("X", uniform(58, 8, 512, 16))
                        .input("Y", uniform(59, 384, 16)).input("Bias", uniform(60, 384)).attr("trans_y", true),
                        "F.linear(X, Y, Bias)")
                .add("linear_gelu", GradientChecker.forOp("fused_gemm_epilogue").input("X", uniform(61, 3, 50, 16))
                        .input("Y", uniform(62, 16, 24)).input("Bias", uniform(63, 24)).attr("activation", "gelu"),
                        "F.gelu(X @ Y + Bias)")
                // planted mistakes: each must fail
                .add("planted_attention_mask_off_by_one", attention(50, true), nanoGptAttention(
                        "att = att.masked_fill(torch.tril(torch.ones(T, T), 1) == 0, float('-inf'))", HEADS))
                .add("planted_attention_wrong_value_transpose", attention(51, true),
                        nanoGptAttention(CAUSAL, "v = v.reshape(B, 4, T, C // 4)"))
                .add("planted_causal_mask_off_by_one", GradientChecker.forOp("tril_triu").input("X", uniform(41, 6, 6)),
                        "torch.tril(X, 1)")
                .add("planted_wrong_head_transpose", GradientChecker.forOp("transpose").input("X", uniform(42, 2, 4, 4, 4))
                        .attr("axis", new int[]{0, 2, 1, 3}), "X.permute(0, 1, 3, 2)")
                .add("planted_exact_vs_tanh_gelu", GradientChecker.forOp("gelu").input("X", range(43, -3, 3, 200)),
                        "F.gelu(X, approximate='tanh')")
                .add("planted_smoothing_ignored", GradientChecker.forOp("softmax_with_cross_entropy")
                        .input("Logits", range(44, -3, 3, 2, 4, 11)).input("Label", labels).attr("label_smoothing", 0.1f)
                        .lossFrom("Loss"), "F.cross_entropy(Logits.reshape(-1, 11), Label.reshape(-1),"
                        + " reduction='none').reshape(2, 4, 1)")
                .add("planted_scores_not_scaled", GradientChecker.forOp("matmul").input("X", uniform(45, 2, 3, 8, 4))
                        .input("Y", uniform(46, 2, 3, 8, 4)).attr("transpose_Y", true).attr("alpha", 0.5f),
                        "X @ Y.transpose(-1, -2)")
                .measure(dir);
        all.forEach(m -> System.out.println("TorchOpCheck: " + m));
        List<Measurement> wrong = all.stream().filter(m -> !PLANTED.contains(m.caseName()) && !m.passed()).toList();
        assertTrue(wrong.isEmpty(), "outside float32 noise of PyTorch's float64 result:\n"
                + wrong.stream().map(Measurement::toString).collect(Collectors.joining("\n")));
        for (String planted : PLANTED) {
            List<Measurement> of = all.stream().filter(m -> m.caseName().equals(planted)).toList();
            assertFalse(of.isEmpty(), planted + " was measured");
            assertFalse(of.stream().allMatch(Measurement::passed), planted + " must not pass: " + of);
        }
    }
}
