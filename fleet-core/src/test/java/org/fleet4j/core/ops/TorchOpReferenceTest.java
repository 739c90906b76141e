package org.fleet4j.core.ops;

import static org.fleet4j.core.ops.TestTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Path;
import org.fleet4j.core.autodiff.GradientChecker;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The dense ops of an MLP, forward and backward, against PyTorch (float64 the yardstick). */
class TorchOpReferenceTest {
    @TempDir
    Path dir;

    private static Tensor labels(long seed, int n, int classes) {
        Tensor t = Tensor.zeros(DType.I64, n, 1);
        java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
        for (int i = 0; i < n; i++) {
            t.setLong(i, r.nextInt(classes));
        }
        return t;
    }

    @Test
    void mlpOpsMatchPyTorch() {
        TorchOpCheck.cases()
                .add("matmul_ty", GradientChecker.forOp("matmul").input("X", uniform(1, 16, 32))
                        .input("Y", uniform(2, 24, 32)).attr("transpose_Y", true), "X @ Y.T")
                .add("matmul_batched", GradientChecker.forOp("matmul").input("X", uniform(3, 3, 8, 16))
                        .input("Y", uniform(4, 3, 16, 5)), "X @ Y")
                .add("add_bias", GradientChecker.forOp("elementwise_add").input("X", uniform(5, 8, 6))
                        .input("Y", uniform(6, 6)), "X + Y")
                .add("gelu", GradientChecker.forOp("gelu").input("X", uniform(7, 64)), "F.gelu(X)")
                .add("softmax", GradientChecker.forOp("softmax").input("X", uniform(8, 4, 10)), "F.softmax(X, -1)")
                .add("softmax_ce", GradientChecker.forOp("softmax_with_cross_entropy").input("Logits", uniform(9, 6, 10))
                        .input("Label", labels(10, 6, 10)).lossFrom("Loss"),
                        "F.cross_entropy(Logits, Label[:, 0], reduction='none')[:, None]")
                .check(dir);
    }

    @Test
    void aWrongReferenceIsCaught() {
        var m = TorchOpCheck.cases()
                .add("gelu_vs_tanh_gelu", GradientChecker.forOp("gelu").input("X", uniform(7, 64)),
                        "F.gelu(X, approximate='tanh')")
                .measure(dir);
        assertFalse(m.stream().allMatch(TorchOpCheck.Measurement::passed), "the tanh approximation differs: " + m);
    }
}
