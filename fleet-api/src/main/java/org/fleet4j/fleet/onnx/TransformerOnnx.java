package org.fleet4j.fleet.onnx;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.SelfAttentionOp;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * The ONNX forms of the transformer's ops, for {@link OnnxExporter}: {@code layer_norm} as LayerNormalization (opset
 * 17), {@code fused_gemm_epilogue} as MatMul + Add (+ the exact GELU), {@code self_attention} decomposed into Split,
 * Reshape, Transpose, MatMul, Softmax with the causal mask as a constant, and {@code arange} as the constant it is.
 */
final class TransformerOnnx {
    static final Set<String> TYPES = Set.of("layer_norm", "fused_gemm_epilogue", "self_attention", "arange");

    private TransformerOnnx() {
    }

    /** Why {@code op} cannot be exported, or null when it can. */
    static String whyNot(Op op) {
        return switch (op.type()) {
            case "fused_gemm_epilogue" -> op.boolAttr("trans_x") ? "has trans_x, which the exporter does not write" : null;
            case "self_attention" -> op.floatAttr("dropout_prob") > 0 && !op.boolAttr("is_test")
                    ? "drops attention weights (dropout_prob " + op.floatAttr("dropout_prob") + ", is_test=false); build"
                    + " the inference program with isTest true" : null;
            default -> null;
        };
    }

    static void convert(OnnxGraph g, Block b, Op op) {
        switch (op.type()) {
            case "layer_norm" -> layerNorm(g, b, op);
            case "fused_gemm_epilogue" -> gemmEpilogue(g, b, op);
            case "self_attention" -> selfAttention(g, b, op);
            case "arange" -> arange(g, op);
            default -> throw new IllegalStateException("ONNX export: " + op.type() + " is not a transformer op");
        }
    }

    /** Y = (X - mean) / sqrt(var + eps) * Scale + Bias over the dims from begin_norm_axis on; Mean and Variance unused. */
    private static void layerNorm(OnnxGraph g, Block b, Op op) {
        String y = op.out("Y");
        long[] xs = b.var(op.in("X")).shape();
        int axis = op.intAttr("begin_norm_axis");
        long[] normalised = Arrays.copyOfRange(xs, axis, xs.length);
        DType dtype = b.var(op.in("X")).dtype();
        String scale = op.input("Scale").isEmpty() ? g.constant(y + "/ones", filled(dtype, normalised, 1f))
                : shaped(g, op.in("Scale"), normalised, y + "/scale");
        String bias = op.input("Bias").isEmpty() ? g.constant(y + "/zeros", filled(dtype, normalised, 0f))
                : shaped(g, op.in("Bias"), normalised, y + "/bias");
        g.node("LayerNormalization", List.of(g.value(op.in("X")), scale, bias), List.of(g.define(y)),
                Map.of("axis", axis, "epsilon", op.floatAttr("epsilon")));
    }

    /** A [right] scale or bias reshaped to the normalised dims, which ONNX broadcasts it over. */
    private static String shaped(OnnxGraph g, String var, long[] normalised, String hint) {
        if (normalised.length == 1) {
            return g.value(var);
        }
        String out = g.fresh(hint);
        g.node("Reshape", List.of(g.value(var), g.constant(hint + "/shape", Tensor.ofLongs(normalised, normalised.length))),
                List.of(out), Map.of());
        return out;
    }

    /** act(X op(Y) + Bias): MatMul batches X's leading dims over the matrix Y as the op does. */
    private static void gemmEpilogue(OnnxGraph g, Block b, Op op) {
        String out = op.out("Out");
        String y = OnnxExporter.transposedIf(g, b, op.in("Y"), op.boolAttr("trans_y"));
        String product = g.fresh(out + "/product");
        g.node("MatMul", List.of(g.value(op.in("X")), y), List.of(product), Map.of());
        if (op.stringAttr("activation").equals("gelu")) {
            String biased = g.fresh(out + "/biased");
            g.node("Add", List.of(product, g.value(op.in("Bias"))), List.of(biased), Map.of());
            OnnxExporter.exactGelu(g, biased, b.var(op.in("X")).dtype(), out);
        } else {
            g.node("Add", List.of(product, g.value(op.in("Bias"))), List.of(g.define(out)), Map.of());
        }
    }

    /**
     * softmax(scale q k^T + masks) v per head on QKV [B, T, 3E]: q, k, v split on the last dim, each [B, T, H, D]
     * moved to [B, H, T, D] (k to [B, H, D, T]); the causal mask a constant [T, T] of 0 and -1e9 (the op's masked
     * score); KeyPadding [B, T] adds -1e9 at padded keys; the heads go back to [B, T, E].
     */
    private static void selfAttention(OnnxGraph g, Block b, Op op) {
        String out = op.out("Out");
        long[] qkv = b.var(op.in("QKV")).shape();
        long t = qkv[1];
        long e = qkv[2] / 3;
        long heads = op.intAttr("num_heads");
        long d = e / heads;
        DType dtype = b.var(op.in("QKV")).dtype();
        List<String> parts = List.of(g.fresh(out + "/q"), g.fresh(out + "/k"), g.fresh(out + "/v"));
        g.node("Split", List.of(g.value(op.in("QKV")), g.constant(out + "/split", Tensor.ofLongs(new long[]{e, e, e}, 3))),
                parts, Map.of("axis", 2));
        String headShape = g.constant(out + "/head_shape", Tensor.ofLongs(new long[]{-1, t, heads, d}, 4));
        String q = heads(g, parts.get(0), headShape, new long[]{0, 2, 1, 3});
        String kT = heads(g, parts.get(1), headShape, new long[]{0, 2, 3, 1});
        String v = heads(g, parts.get(2), headShape, new long[]{0, 2, 1, 3});
        String scores = g.fresh(out + "/scores");
        g.node("MatMul", List.of(q, kT), List.of(scores), Map.of());
        String scaled = g.fresh(out + "/scaled");
        g.node("Mul", List.of(scores, g.constant(out + "/scale", OnnxExporter.scalar(dtype, op.floatAttr("scale")))),
                List.of(scaled), Map.of());
        String masked = scaled;
        if (op.boolAttr("causal")) {
            Tensor mask = Tensor.zeros(dtype, t, t);
            for (long i = 0; i < t; i++) {
                for (long j = i + 1; j < t; j++) {
                    mask.setFloat(i * t + j, SelfAttentionOp.MASKED);
                }
            }
            masked = g.fresh(out + "/causal");
            g.node("Add", List.of(scaled, g.constant(out + "/causal_mask", mask)), List.of(masked), Map.of());
        }
        if (!op.input("KeyPadding").isEmpty()) {
            String padded = g.fresh(out + "/padded");
            g.node("Sub", List.of(g.constant(out + "/one", OnnxExporter.scalar(dtype, 1f)), g.value(op.in("KeyPadding"))),
                    List.of(padded), Map.of());
            String penalty = g.fresh(out + "/padding_penalty");
            g.node("Mul", List.of(padded, g.constant(out + "/masked", OnnxExporter.scalar(dtype, SelfAttentionOp.MASKED))),
                    List.of(penalty), Map.of());
            String keys = g.fresh(out + "/padding_mask");
            g.node("Unsqueeze", List.of(penalty, g.constant(out + "/padding_axes", Tensor.ofLongs(new long[]{1, 2}, 2))),
                    List.of(keys), Map.of());
            String withPadding = g.fresh(out + "/with_padding");
            g.node("Add", List.of(masked, keys), List.of(withPadding), Map.of());
            masked = withPadding;
        }
        String weights = op.output("Softmax").isEmpty() ? g.fresh(out + "/weights") : g.define(op.out("Softmax"));
        g.node("Softmax", List.of(masked), List.of(weights), Map.of("axis", -1));
        String context = g.fresh(out + "/context");
        g.node("MatMul", List.of(weights, v), List.of(context), Map.of());
        String merged = g.fresh(out + "/merged");
        g.node("Transpose", List.of(context), List.of(merged), Map.of("perm", new long[]{0, 2, 1, 3}));
        g.node("Reshape", List.of(merged, g.constant(out + "/shape", Tensor.ofLongs(new long[]{-1, t, e}, 3))),
                List.of(g.define(out)), Map.of());
    }

    /** One of q, k, v [B, T, E] as [B, T, H, D], transposed by {@code perm}. */
    private static String heads(OnnxGraph g, String part, String headShape, long[] perm) {
        String split = g.fresh(part + "/heads");
        g.node("Reshape", List.of(part, headShape), List.of(split), Map.of());
        String moved = g.fresh(part + "/transposed");
        g.node("Transpose", List.of(split), List.of(moved), Map.of("perm", perm));
        return moved;
    }

    /** start, start + step, ... below end: known when exported, so a constant. */
    private static void arange(OnnxGraph g, Op op) {
        double start = op.floatAttr("start");
        double step = op.floatAttr("step");
        DType dtype = DType.parse(op.stringAttr("dtype"));
        int n = (int) Math.max(0, Math.ceil(((double) op.floatAttr("end") - start) / step));
        Tensor values = Tensor.zeros(dtype, n);
        for (int i = 0; i < n; i++) {
            values.setDouble(i, start + i * step);
        }
        g.alias(op.out("Out"), g.constant(op.out("Out"), values));
    }

    private static Tensor filled(DType dtype, long[] shape, float value) {
        Tensor t = Tensor.zeros(dtype, shape);
        t.fill(value);
        return t;
    }
}
