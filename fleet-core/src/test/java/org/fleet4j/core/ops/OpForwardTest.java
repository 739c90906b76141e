package org.fleet4j.core.ops;

import static org.fleet4j.core.ops.TestTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** Forward values of the ops against hand-computed references. */
class OpForwardTest {

    private static void assertValues(float[] expected, Tensor actual, double tol) {
        float[] a = actual.toFloatArray();
        assertEquals(expected.length, a.length, "element count of " + actual.describe());
        for (int i = 0; i < a.length; i++) {
            assertEquals(expected[i], a[i], tol, "element " + i + " of " + actual);
        }
    }

    @Test
    void activationsAtKnownPoints() {
        Tensor x = Tensor.of(new float[]{1f, -1f, 0f, 2f, 0.5f}, 5);
        // gelu(x) = x Phi(x): Phi(1) = 0.8413447460685429, Phi(2) = 0.9772498680518208, Phi(0.5) = 0.6914624612740131
        assertValues(new float[]{0.8413447460685429f, -0.15865525393145707f, 0f, 1.9544997361036416f,
                0.34573123063700656f}, OneOp.of("gelu").in("X", x).run("Out"), 1e-6);
        assertValues(new float[]{0.7310585786300049f, 0.2689414213699951f, 0.5f, 0.8807970779778823f,
                0.6224593312018546f}, OneOp.of("sigmoid").in("X", x).run("Out"), 1e-6);
        assertValues(new float[]{0.7615941559557649f, -0.7615941559557649f, 0f, 0.9640275800758169f,
                0.46211715726000974f}, OneOp.of("tanh").in("X", x).run("Out"), 1e-6);
        assertValues(new float[]{1f, 0f, 0f, 2f, 0.5f}, OneOp.of("relu").in("X", x).run("Out"), 0);
        assertValues(new float[]{-1.5f, 4.5f, 1.5f, -4.5f, 0f},
                OneOp.of("scale").in("X", x).attr("scale", -3f).attr("bias", 1.5f).run("Out"), 1e-6);
        assertValues(new float[]{-7.5f, -1.5f, -4.5f, -10.5f, -6f},
                OneOp.of("scale").in("X", x).attr("scale", -3f).attr("bias", 1.5f).attr("bias_after_scale", false)
                        .run("Out"), 1e-6);
    }

    @Test
    void matmulByHand() {
        Tensor x = Tensor.of(new float[]{1, 2, 3, 4}, 2, 2);
        Tensor y = Tensor.of(new float[]{5, 6, 7, 8}, 2, 2);
        assertValues(new float[]{19, 22, 43, 50}, OneOp.of("matmul").in("X", x).in("Y", y).run("Out"), 0);
        assertValues(new float[]{17, 23, 39, 53},
                OneOp.of("matmul").in("X", x).in("Y", y).attr("transpose_Y", true).run("Out"), 0);
        assertValues(new float[]{26, 30, 38, 44},
                OneOp.of("matmul").in("X", x).in("Y", y).attr("transpose_X", true).run("Out"), 0);
        assertValues(new float[]{2 * 23, 2 * 31, 2 * 34, 2 * 46}, OneOp.of("matmul").in("X", x).in("Y", y)
                .attr("transpose_X", true).attr("transpose_Y", true).attr("alpha", 2f).run("Out"), 0);
        Tensor bx = Tensor.of(new float[]{1, 2, 3, 4, 1, 0, 0, 1}, 2, 2, 2);
        Tensor by = Tensor.of(new float[]{5, 6, 7, 8, 9, 8, 7, 6}, 2, 2, 2);
        Tensor out = OneOp.of("matmul").in("X", bx).in("Y", by).run("Out");
        assertArrayEquals(new long[]{2, 2, 2}, out.shape());
        assertValues(new float[]{19, 22, 43, 50, 9, 8, 7, 6}, out, 0);
    }

    @Test
    void elementwiseWithPaddleAxis() {
        Tensor x = uniform(1, 2, 3, 2);
        Tensor y = Tensor.of(new float[]{10, 20, 30}, 3);
        Tensor out = OneOp.of("elementwise_add").in("X", x).in("Y", y).attr("axis", 1).run("Out");
        float[] expected = new float[12];
        for (int i = 0; i < 12; i++) {
            expected[i] = x.getFloat(i) + y.getFloat((i / 2) % 3);
        }
        assertValues(expected, out, 0);
        Tensor div = OneOp.of("elementwise_div").in("X", x).in("Y", Tensor.of(new float[]{2, 4}, 2)).run("Out");
        for (int i = 0; i < 12; i++) {
            expected[i] = x.getFloat(i) / (i % 2 == 0 ? 2 : 4);
        }
        assertValues(expected, div, 0);
    }

    @Test
    void softmaxAndCrossEntropyByHand() {
        Tensor logits = Tensor.of(new float[]{0, (float) Math.log(2), (float) Math.log(3), 5, 5, 5}, 2, 3);
        assertValues(new float[]{1 / 6f, 2 / 6f, 3 / 6f, 1 / 3f, 1 / 3f, 1 / 3f},
                OneOp.of("softmax").in("X", logits).run("Out"), 1e-6);
        Map<String, Tensor> r = OneOp.of("softmax_with_cross_entropy").in("Logits", logits)
                .in("Label", Tensor.ofLongs(new long[]{2, 0}, 2, 1)).run();
        assertArrayEquals(new long[]{2, 1}, r.get("Loss").shape());
        assertValues(new float[]{(float) Math.log(2), (float) Math.log(3)}, r.get("Loss"), 1e-6);
        var e = assertThrows(ExecutionException.class, () -> OneOp.of("softmax_with_cross_entropy")
                .in("Logits", logits).in("Label", Tensor.ofLongs(new long[]{2, 3}, 2, 1)).run());
        assertTrue(e.getMessage().contains("label 3 at row 1 is outside [0, 3)"), e.getMessage());
    }

    @Test
    void meanAndSum() {
        Tensor a = Tensor.of(new float[]{1, 2, 3, 6}, 2, 2);
        Tensor b = Tensor.of(new float[]{10, 20, 30, 40}, 2, 2);
        assertValues(new float[]{3}, OneOp.of("mean").in("X", a).run("Out"), 0);
        assertValues(new float[]{11, 22, 33, 46}, OneOp.of("sum").in("X", a, b).run("Out"), 0);
    }

    @Test
    void reshapeKeepsValuesAndInfersDims() {
        Tensor x = uniform(2, 2, 3, 4);
        Tensor out = OneOp.of("reshape").in("X", x).attr("shape", new long[]{0, -1}).run("Out");
        assertArrayEquals(new long[]{2, 12}, out.shape());
        assertArrayEquals(x.toFloatArray(), out.toFloatArray());
        var build = assertThrows(IrException.class,
                () -> OneOp.of("reshape").in("X", Tensor.zeros(2, 3)).attr("shape", new long[]{4, 2}).run());
        assertTrue(build.getMessage().contains("reshape(X=x_0 float32[2, 3]): cannot reshape [2, 3] (6 elements) to"
                + " [4, 2] (8 elements)"), build.getMessage());
        Program p = new Program();
        p.globalBlock().createVar("x", DType.F32, -1, 3).setData(true);
        p.globalBlock().appendOp("reshape", Map.of("X", List.of("x")), Map.of("Out", List.of("y")),
                Map.of("shape", new long[]{4, -1}));
        assertArrayEquals(new long[]{4, -1}, p.globalBlock().var("y").shape());
        var run = assertThrows(ExecutionException.class,
                () -> new Executor().run(p, new Scope(), Map.of("x", Tensor.zeros(2, 3)), List.of("y")));
        assertTrue(run.getMessage().contains("op #0 reshape") && run.getMessage().contains("X float32[2, 3]: cannot reshape"),
                run.getMessage());
    }

    @Test
    void concatAlongEachAxis() {
        Tensor a = Tensor.of(new float[]{1, 2, 3, 4}, 2, 2);
        Tensor b = Tensor.of(new float[]{5, 6}, 2, 1);
        Tensor c = Tensor.of(new float[]{7, 8}, 1, 2);
        Tensor cols = OneOp.of("concat").in("X", a, b).attr("axis", 1).run("Out");
        assertArrayEquals(new long[]{2, 3}, cols.shape());
        assertValues(new float[]{1, 2, 5, 3, 4, 6}, cols, 0);
        assertValues(new float[]{1, 2, 5, 3, 4, 6}, OneOp.of("concat").in("X", a, b).attr("axis", -1).run("Out"), 0);
        Tensor rows = OneOp.of("concat").in("X", a, c).run("Out");
        assertArrayEquals(new long[]{3, 2}, rows.shape());
        assertValues(new float[]{1, 2, 3, 4, 7, 8}, rows, 0);
        Tensor ids = OneOp.of("concat").in("X", Tensor.ofLongs(new long[]{1, 2}, 2), Tensor.ofLongs(new long[]{3}, 1))
                .run("Out");
        assertArrayEquals(new long[]{1, 2, 3}, ids.toLongArray(), "any dtype is copied as bytes");
    }

    @Test
    void dropoutIsSeededAndScalesWhatItKeeps() {
        Tensor x = TestTensors.range(3, 1, 2, 100, 100);
        OneOp op = OneOp.of("dropout").in("X", x).attr("dropout_prob", 0.3f).attr("seed", 7L);
        Map<String, Tensor> first = op.run();
        Map<String, Tensor> second = op.run();
        Tensor mask = first.get("Mask");
        long zeros = 0;
        for (long i = 0; i < mask.numel(); i++) {
            float m = mask.getFloat(i);
            assertTrue(m == 0f || m == 1f / 0.7f, "mask value " + m);
            zeros += m == 0f ? 1 : 0;
            assertEquals(x.getFloat(i) * m, first.get("Out").getFloat(i), 0);
        }
        assertEquals(0.3, zeros / 10000.0, 0.02, "fraction dropped");
        assertNotEquals(java.util.Arrays.toString(mask.toFloatArray()),
                java.util.Arrays.toString(second.get("Mask").toFloatArray()), "the generator advances every step");
        Tensor again = OneOp.of("dropout").in("X", x).attr("dropout_prob", 0.3f).attr("seed", 7L).run("Mask");
        assertArrayEquals(mask.toFloatArray(), again.toFloatArray(), "same seed, same masks");
        Tensor other = OneOp.of("dropout").in("X", x).attr("dropout_prob", 0.3f).attr("seed", 8L).run("Mask");
        assertNotEquals(java.util.Arrays.toString(mask.toFloatArray()), java.util.Arrays.toString(other.toFloatArray()));
    }

    @Test
    void dropoutImplementationsAtTrainAndTestTime() {
        Tensor x = Tensor.of(new float[]{1, 2, 3, 4}, 4);
        assertValues(x.toFloatArray(), OneOp.of("dropout").in("X", x).attr("dropout_prob", 0.25f)
                .attr("is_test", true).run("Out"), 0);
        assertValues(new float[]{0.75f, 1.5f, 2.25f, 3f}, OneOp.of("dropout").in("X", x).attr("dropout_prob", 0.25f)
                .attr("is_test", true).attr("dropout_implementation", "downgrade_in_infer").run("Out"), 1e-7);
        Tensor kept = OneOp.of("dropout").in("X", x).attr("dropout_prob", 0.5f).attr("seed", 1L)
                .attr("dropout_implementation", "downgrade_in_infer").run("Out");
        for (int i = 0; i < 4; i++) {
            assertTrue(kept.getFloat(i) == 0f || kept.getFloat(i) == x.getFloat(i), "kept values are unscaled");
        }
        assertValues(new float[4], OneOp.of("dropout").in("X", x).attr("dropout_prob", 1f).run("Out"), 0);
    }

    @Test
    void lookupTableRowsPaddingAndBadIds() {
        float[] w = new float[12];
        for (int i = 0; i < 12; i++) {
            w[i] = (i / 3) * 10 + i % 3;
        }
        Tensor table = Tensor.of(w, 4, 3);
        Tensor out = OneOp.of("lookup_table").in("W", table).in("Ids", Tensor.ofLongs(new long[]{2, 0, 2}, 3, 1))
                .run("Out");
        assertArrayEquals(new long[]{3, 3}, out.shape());
        assertValues(new float[]{20, 21, 22, 0, 1, 2, 20, 21, 22}, out, 0);
        Tensor padded = OneOp.of("lookup_table").in("W", table).in("Ids", Tensor.ofInts(new int[]{3, 1}, 2))
                .attr("padding_idx", 3L).run("Out");
        assertValues(new float[]{0, 0, 0, 10, 11, 12}, padded, 0);
        var e = assertThrows(ExecutionException.class, () -> OneOp.of("lookup_table").in("W", table)
                .in("Ids", Tensor.ofLongs(new long[]{1, 5}, 2)).run());
        assertTrue(e.getMessage().contains("id 5 at position 1 is outside the vocabulary of size 4"), e.getMessage());
    }

    @Test
    void batchNormTrainingByHand() {
        Tensor x = Tensor.of(new float[]{1, 2, 3, 4, 5, 6, 7, 8}, 4, 2);
        Tensor runningMean = Tensor.of(new float[]{0, 0}, 2);
        Tensor runningVar = Tensor.of(new float[]{1, 1}, 2);
        Map<String, Tensor> r = OneOp.of("batch_norm").in("X", x).in("Scale", Tensor.of(new float[]{2, 1}, 2))
                .in("Bias", Tensor.of(new float[]{0, 1}, 2)).in("Mean", runningMean).in("Variance", runningVar)
                .attr("epsilon", 0f).run();
        float s = (float) (1 / Math.sqrt(5));
        assertValues(new float[]{2 * -3 * s, -3 * s + 1, 2 * -s, -s + 1, 2 * s, s + 1, 2 * 3 * s, 3 * s + 1},
                r.get("Y"), 1e-6);
        assertValues(new float[]{4, 5}, r.get("SavedMean"), 1e-6);
        assertValues(new float[]{s, s}, r.get("SavedVariance"), 1e-6);
        // running = 0.9 running + 0.1 batch, with the biased batch variance 5
        assertValues(new float[]{0.4f, 0.5f}, runningMean, 1e-6);
        assertValues(new float[]{1.4f, 1.4f}, runningVar, 1e-6);
        assertValues(new float[]{0.4f, 0.5f}, r.get("MeanOut"), 1e-6);
    }

    @Test
    void batchNormTestModeUsesRunningStatistics() {
        Tensor x = Tensor.of(new float[]{1, 2, 3, 4}, 2, 2);
        Tensor runningMean = Tensor.of(new float[]{1, 2}, 2);
        Tensor runningVar = Tensor.of(new float[]{4, 9}, 2);
        Tensor y = OneOp.of("batch_norm").in("X", x).in("Scale", Tensor.of(new float[]{2, 3}, 2))
                .in("Bias", Tensor.of(new float[]{1, -1}, 2)).in("Mean", runningMean).in("Variance", runningVar)
                .attr("epsilon", 0f).attr("is_test", true).run("Y");
        assertValues(new float[]{1, -1, 3, 1}, y, 1e-6);
        assertValues(new float[]{1, 2}, runningMean, 0);
        assertValues(new float[]{4, 9}, runningVar, 0);
    }

    @Test
    void batchNormLayoutsAgree() {
        Tensor nchw = uniform(4, 2, 3, 2, 2);
        Tensor nhwc = Tensor.zeros(2, 2, 2, 3);
        for (int n = 0; n < 2; n++) {
            for (int c = 0; c < 3; c++) {
                for (int h = 0; h < 2; h++) {
                    for (int w = 0; w < 2; w++) {
                        nhwc.set(nchw.get(n, c, h, w), n, h, w, c);
                    }
                }
            }
        }
        Tensor scale = Tensor.of(new float[]{1, 2, 3}, 3);
        Tensor bias = Tensor.of(new float[]{0, 1, 2}, 3);
        Map<String, Tensor> a = OneOp.of("batch_norm").in("X", nchw).in("Scale", scale).in("Bias", bias)
                .in("Mean", Tensor.zeros(3)).in("Variance", Tensor.zeros(3)).run();
        Map<String, Tensor> b = OneOp.of("batch_norm").in("X", nhwc).in("Scale", scale).in("Bias", bias)
                .in("Mean", Tensor.zeros(3)).in("Variance", Tensor.zeros(3)).attr("data_layout", "NHWC").run();
        assertArrayEquals(a.get("SavedMean").toFloatArray(), b.get("SavedMean").toFloatArray(), 1e-6f);
        for (int n = 0; n < 2; n++) {
            for (int c = 0; c < 3; c++) {
                for (int h = 0; h < 2; h++) {
                    for (int w = 0; w < 2; w++) {
                        assertEquals(a.get("Y").get(n, c, h, w), b.get("Y").get(n, h, w, c), 1e-6);
                    }
                }
            }
        }
        assertEquals(DType.F32, a.get("Y").dtype());
    }
}
