package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** The CPU reference of the GPU kernel tests, checked here where it runs: forward, grad and optimizer ops by hand. */
class CpuOpTest {
    @Test
    void forwardAndGradOps() {
        Tensor x = Tensor.of(new float[]{-1, 2, 0.5f});
        assertEquals(2f, CpuOp.run("relu", Map.of("X", x), Map.of(), List.of("Out")).get("Out").getFloat(1));
        Tensor out = Tensor.of(new float[]{0, 2, 0.5f});
        Tensor g = Tensor.of(new float[]{10, 20, 30});
        Tensor gx = CpuOp.run("relu_grad", Map.of("X", x, "Out", out, "Out@GRAD", g), Map.of(), List.of("X@GRAD")).get("X@GRAD");
        assertEquals(List.of(0f, 20f, 30f), List.of(gx.getFloat(0), gx.getFloat(1), gx.getFloat(2)));
    }

    @Test
    void softmaxCrossEntropyGradIsSoftmaxMinusOneHot() {
        Tensor logits = Tensor.of(new float[]{1, 2, 3, 0, 0, 0}, 2, 3);
        Tensor labels = Tensor.ofLongs(new long[]{2, -100}, 2, 1);
        Map<String, Tensor> fwd = CpuOp.run("softmax_with_cross_entropy", Map.of("Logits", logits, "Label", labels),
                Map.of(), List.of("Softmax", "Loss"));
        Tensor dloss = Tensor.of(new float[]{2, 5}, 2, 1);
        Tensor d = CpuOp.run("softmax_with_cross_entropy_grad", Map.of("Logits", logits, "Label", labels,
                "Softmax", fwd.get("Softmax"), "Loss", fwd.get("Loss"), "Loss@GRAD", dloss), Map.of(),
                List.of("Logits@GRAD")).get("Logits@GRAD");
        assertEquals((fwd.get("Softmax").getFloat(2) - 1) * 2, d.getFloat(2), 1e-6);
        assertEquals(0f, d.getFloat(4), "an ignored row has no gradient");
        assertEquals(0f, fwd.get("Loss").getFloat(1), "and no loss");
    }

    @Test
    void optimizerOpsReturnTheUpdatedParameter() {
        Tensor p = Tensor.of(new float[]{1, 2});
        Tensor g = Tensor.of(new float[]{0.5f, -1});
        Tensor lr = Tensor.of(new float[]{0.1f}, 1);
        Tensor out = CpuOp.run("sgd", Map.of("Param", p, "Grad", g, "LearningRate", lr), Map.of(), List.of("ParamOut"))
                .get("ParamOut");
        assertEquals(0.95f, out.getFloat(0), 1e-6);
        assertEquals(1f, p.getFloat(0), "the caller's tensor is not modified (CpuOp feeds copies)");
    }

    @Test
    void batchNormGradientOfTheBiasIsTheSumOfDy() {
        Tensor x = Tensor.of(new float[]{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2, 1);
        Tensor ones = Tensor.of(new float[]{1, 1}, 2);
        Tensor zeros = Tensor.of(new float[]{0, 0}, 2);
        Map<String, Tensor> fwd = CpuOp.run("batch_norm", Map.of("X", x, "Scale", ones, "Bias", zeros, "Mean", zeros,
                "Variance", ones), Map.of(), List.of("Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance"));
        assertEquals(3.5f, fwd.get("SavedMean").getFloat(0), 1e-6); // channel 0 holds 1, 2, 5, 6
        Tensor dy = Tensor.of(new float[]{1, 1, 2, 2, 1, 1, 2, 2}, 2, 2, 2, 1);
        Map<String, Tensor> grads = CpuOp.run("batch_norm_grad", Map.of("X", x, "Scale", ones, "Bias", zeros,
                "Mean", zeros, "Variance", ones, "SavedMean", fwd.get("SavedMean"),
                "SavedVariance", fwd.get("SavedVariance"), "Y", fwd.get("Y"), "Y@GRAD", dy), Map.of(),
                List.of("X@GRAD", "Scale@GRAD", "Bias@GRAD"));
        assertEquals(4f, grads.get("Bias@GRAD").getFloat(0), 1e-6);
        assertEquals(8f, grads.get("Bias@GRAD").getFloat(1), 1e-6);
    }
}
