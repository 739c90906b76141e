package org.fleet4j.fleet.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Initializer;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.models.GptConfig;
import org.fleet4j.core.models.GptModel;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.onnx.proto.OnnxProto.ModelProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.TensorProto;
import org.junit.jupiter.api.Test;

/**
 * The transformer's ops exported to ONNX and run by ONNX Runtime give Fleet4J's outputs: a GPT's logits (embeddings,
 * layer norms, attention with its causal mask, the GELU MLP, the tied head; dropout at inference), and the other forms
 * (layer norm over two dims, a GEMM epilogue without the transposed weight, attention with key padding, not causal).
 * The comparison catches the causal mask left out of the exported model.
 */
class TransformerOnnxExportTest {
    /**
     * Two float32 computations of the same values in other orders: measured 7.5e-7 on GPT logits up to 1.73 (6 ulps
     * of the largest) and 3.6e-7 on the other forms (1.5 ulps). 32 ulps of the largest value leaves 5 times room for
     * another CPU and BLAS; the planted mistake moves the logits by more than 1.
     */
    private static final int ULPS = 32;

    @Test
    void aGptsLogitsFromOnnxRuntimeAreFleet4jsAndTheCausalMaskIsSeen() throws Exception {
        GptModel gpt = GptModel.build(new GptConfig(11, 8, 2, 2, 16, 0.1f), 5);
        Scope scope = new Scope();
        Executor exe = new Executor();
        exe.run(gpt.startup(), scope);
        randomise(gpt.main(), scope, 0.3);
        Tensor ids = Tensor.zeros(DType.I64, 3, 8);
        SplittableRandom r = new SplittableRandom(2);
        for (long i = 0; i < ids.numel(); i++) {
            ids.setLong(i, r.nextInt(11));
        }
        String logits = gpt.logits().name();
        float[] expected = exe.run(gpt.sampling(), scope, gpt.samplingFeed(ids), List.of(logits)).get(logits).toFloatArray();
        ModelProto onnx = OnnxExporter.export(gpt.sampling(), scope, List.of("ids"), List.of(logits));
        assertTrue(onnx.getGraph().getNodeList().stream().anyMatch(n -> n.getOpType().equals("LayerNormalization")));
        float[] got = run(onnx, Map.of("ids", ids), logits);
        double bound = ULPS * Math.ulp((float) maxAbs(expected));
        double diff = maxDifference(expected, got);
        System.out.printf(Locale.ROOT, "GPT logits: max |fleet4j - onnxruntime| %.3g, bound %.3g (largest logit %.3g)%n",
                diff, bound, maxAbs(expected));
        assertTrue(diff <= bound, "ONNX Runtime's logits differ from Fleet4J's by " + diff + " (bound " + bound + ")");

        ModelProto.Builder unmasked = onnx.toBuilder();
        var graph = unmasked.getGraphBuilder();
        int masks = 0;
        for (int i = 0; i < graph.getInitializerCount(); i++) {
            TensorProto t = graph.getInitializer(i);
            if (t.getName().endsWith("/causal_mask")) {
                graph.setInitializer(i, t.toBuilder().setRawData(com.google.protobuf.ByteString.copyFrom(
                        new byte[t.getRawData().size()])));
                masks++;
            }
        }
        assertEquals(2, masks, "a causal mask per block");
        double planted = maxDifference(expected, run(unmasked.build(), Map.of("ids", ids), logits));
        System.out.printf(Locale.ROOT, "planted: the causal mask zeroed: max diff %.3g%n", planted);
        assertTrue(planted > 100 * bound, "a model without the causal mask passed: " + planted);
    }

    @Test
    void layerNormOverTwoDimsAGemmWithoutTransposeAndPaddedNonCausalAttentionAgree() throws Exception {
        Program main = new Program().setRandomSeed(4);
        Program startup = new Program().setRandomSeed(4);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 4, 6);
        Var padding = nn.data("padding", DType.F32, -1, 4);
        Var normed = nn.layerNorm(x, 1, 1e-5f, "norm", ParamAttr.DEFAULT, ParamAttr.DEFAULT);
        Var w = nn.createParameter("w", DType.F32, new long[]{6, 12}, Initializer.normal(0f, 0.5f));
        Var bias = nn.createParameter("bias", DType.F32, new long[]{12}, Initializer.normal(0f, 0.5f));
        Var qkv = nn.op("fused_gemm_epilogue", Map.of("X", List.of(normed.name()), "Y", List.of(w.name()), "Bias",
                List.of(bias.name())), List.of("Out", "ReserveSpace"), Map.of("trans_y", false, "activation", "gelu"))[0];
        Var out = nn.op("self_attention", Map.of("QKV", List.of(qkv.name()), "KeyPadding", List.of(padding.name())),
                List.of("Out", "Softmax"), Map.of("num_heads", 2, "scale", 0.7f, "causal", false, "dropout_prob", 0f,
                        "is_test", true, "seed", 1L))[0];
        Scope scope = new Scope();
        Executor exe = new Executor();
        exe.run(startup, scope);
        randomise(main, scope, 0.5);
        SplittableRandom r = new SplittableRandom(3);
        Tensor xs = Tensor.zeros(DType.F32, 2, 4, 6);
        for (long i = 0; i < xs.numel(); i++) {
            xs.setFloat(i, (float) (2 * r.nextDouble() - 1));
        }
        Tensor pad = Tensor.of(new float[]{1, 1, 1, 0, 1, 0, 1, 1}, 2, 4);
        Map<String, Tensor> feed = Map.of("x", xs, "padding", pad);
        float[] expected = exe.run(main, scope, feed, List.of(out.name())).get(out.name()).toFloatArray();
        float[] got = run(OnnxExporter.export(main, scope, List.of("x", "padding"), List.of(out.name())), feed, out.name());
        double bound = ULPS * Math.ulp((float) maxAbs(expected));
        double diff = maxDifference(expected, got);
        System.out.printf(Locale.ROOT, "layer_norm + gemm + padded attention: max diff %.3g, bound %.3g%n", diff, bound);
        assertTrue(diff <= bound, "differs by " + diff);
    }

    @Test
    void attentionThatDropsWeightsInTrainingIsRefusedNamingTheOp() {
        Layers nn = new Layers(new Program(), new Program());
        Var qkv = nn.data("qkv", DType.F32, -1, 4, 12);
        Var out = nn.op("self_attention", Map.of("QKV", List.of(qkv.name())), List.of("Out", "Softmax", "Mask"),
                Map.of("num_heads", 2, "scale", 0.5f, "causal", true, "dropout_prob", 0.1f, "is_test", false,
                        "seed", 1L))[0];
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> OnnxExporter.export(nn.main(), new Scope(), List.of("qkv"), List.of(out.name())));
        assertEquals("ONNX export: op self_attention (output '" + out.name() + "') drops attention weights (dropout_prob"
                + " 0.1, is_test=false); build the inference program with isTest true", e.getMessage());
    }

    /** Every parameter of {@code program} uniform in [-scale, scale] around its initial value (norm scales near 1). */
    private static void randomise(Program program, Scope scope, double scale) {
        SplittableRandom r = new SplittableRandom(9);
        for (Var v : program.globalBlock().vars()) {
            if (v.isParameter()) {
                Tensor t = scope.get(v.name());
                for (long i = 0; i < t.numel(); i++) {
                    t.setFloat(i, (float) (t.getFloat(i) + scale * (2 * r.nextDouble() - 1)));
                }
            }
        }
    }

    private static float[] run(ModelProto model, Map<String, Tensor> feed, String output) throws Exception {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        Map<String, OnnxTensor> inputs = new HashMap<>();
        try (OrtSession session = env.createSession(model.toByteArray())) {
            for (var e : feed.entrySet()) {
                Tensor t = e.getValue();
                inputs.put(e.getKey(), t.dtype() == DType.I64
                        ? OnnxTensor.createTensor(env, LongBuffer.wrap(t.toLongArray()), t.shape())
                        : OnnxTensor.createTensor(env, FloatBuffer.wrap(t.toFloatArray()), t.shape()));
            }
            try (OrtSession.Result result = session.run(inputs)) {
                FloatBuffer b = ((OnnxTensor) result.get(output).orElseThrow()).getFloatBuffer();
                float[] values = new float[b.remaining()];
                b.get(values);
                return values;
            }
        } finally {
            inputs.values().forEach(OnnxTensor::close);
        }
    }

    private static double maxDifference(float[] a, float[] b) {
        assertEquals(a.length, b.length);
        double max = 0;
        for (int i = 0; i < a.length; i++) {
            max = Math.max(max, Math.abs((double) a[i] - b[i]));
        }
        return max;
    }

    private static double maxAbs(float[] a) {
        double max = 0;
        for (float v : a) {
            max = Math.max(max, Math.abs(v));
        }
        return max;
    }
}
