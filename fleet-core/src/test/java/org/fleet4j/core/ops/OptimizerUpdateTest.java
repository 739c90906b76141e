package org.fleet4j.core.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ir.VarKind;
import org.fleet4j.core.layers.Initializer;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.Adagrad;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.AdamW;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/**
 * The optimizers against updates computed here by hand, in double, over several steps of the loss
 * L = mean(w * w * x), whose gradient 2 w x / 3 changes with w (so each step depends on the previous one).
 */
class OptimizerUpdateTest {
    private static final double[] W0 = {0.5, -1.0, 2.0};
    private static final double[] X = {1.0, 0.5, -0.25};
    private static final int STEPS = 4;

    /** Trains with the optimizer and returns w after each step. */
    private static double[][] train(Optimizer opt) {
        Program main = new Program();
        Layers nn = new Layers(main, new Program());
        Var x = nn.data("x", DType.F32, 3);
        Var w = nn.createParameter("w", DType.F32, new long[]{3}, Initializer.constant(0f));
        opt.minimize(nn.mean(nn.mul(nn.mul(w, w), x)));
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(nn.startup(), scope);
        for (int i = 0; i < 3; i++) {
            scope.get("w").setDouble(i, W0[i]);
        }
        Tensor feed = Tensor.of(new float[]{(float) X[0], (float) X[1], (float) X[2]}, 3);
        double[][] after = new double[STEPS][];
        for (int s = 0; s < STEPS; s++) {
            exe.run(main, scope, Map.of("x", feed), List.of());
            after[s] = scope.get("w").toDoubleArray();
        }
        return after;
    }

    private static double grad(double[] w, int i) {
        return 2 * w[i] * X[i] / 3;
    }

    private static void assertClose(double[][] expected, double[][] actual) {
        for (int s = 0; s < STEPS; s++) {
            for (int i = 0; i < 3; i++) {
                assertEquals(expected[s][i], actual[s][i], 2e-6 * Math.max(1, Math.abs(expected[s][i])),
                        "w[" + i + "] after step " + (s + 1));
            }
        }
    }

    @Test
    void sgdWithAndWithoutWeightDecay() {
        for (float wd : new float[]{0f, 0.1f}) {
            double[] w = W0.clone();
            double[][] expected = new double[STEPS][];
            for (int s = 0; s < STEPS; s++) {
                double[] next = new double[3];
                for (int i = 0; i < 3; i++) {
                    next[i] = w[i] - 0.3 * (grad(w, i) + wd * w[i]);
                }
                w = next;
                expected[s] = w.clone();
            }
            assertClose(expected, train(new SGD(LrSchedule.constant(0.3), wd)));
        }
    }

    @Test
    void momentumAndNesterov() {
        for (boolean nesterov : new boolean[]{false, true}) {
            double[] w = W0.clone();
            double[] v = new double[3];
            double[][] expected = new double[STEPS][];
            for (int s = 0; s < STEPS; s++) {
                double[] next = new double[3];
                for (int i = 0; i < 3; i++) {
                    double g = grad(w, i);
                    v[i] = 0.9 * v[i] + g;
                    next[i] = w[i] - 0.2 * (nesterov ? g + 0.9 * v[i] : v[i]);
                }
                w = next;
                expected[s] = w.clone();
            }
            assertClose(expected, train(new Momentum(LrSchedule.constant(0.2), 0.9f, nesterov, 0f)));
        }
    }

    @Test
    void adagrad() {
        assertClose(adagradByHand(0.1, 0), train(new Adagrad(0.1)));
    }

    @Test
    void adagradFromAnInitialAccumulatorValue() {
        assertClose(adagradByHand(0.1, 0.5), train(new Adagrad(LrSchedule.constant(0.1), 1e-6f, 0.5f)));
        assertThrows(IllegalArgumentException.class, () -> new Adagrad(LrSchedule.constant(0.1), 1e-6f, -1f));
        assertThrows(IllegalArgumentException.class, () -> new Adagrad(LrSchedule.constant(0.1), 1e-6f, Float.NaN));
    }

    /** Adagrad whose summed squares start at {@code initial}, epsilon 1e-6 outside the root. */
    private static double[][] adagradByHand(double lr, double initial) {
        double[] w = W0.clone();
        double[] m = {initial, initial, initial};
        double[][] expected = new double[STEPS][];
        for (int s = 0; s < STEPS; s++) {
            double[] next = new double[3];
            for (int i = 0; i < 3; i++) {
                double g = grad(w, i);
                m[i] += g * g;
                next[i] = w[i] - lr * g / (Math.sqrt(m[i]) + 1e-6);
            }
            w = next;
            expected[s] = w.clone();
        }
        return expected;
    }

    /** Textbook Adam with bias-corrected moments; AdamW first decays w by lr * weightDecay. */
    private static double[][] adamByHand(double lr, double weightDecay) {
        double b1 = 0.9;
        double b2 = 0.999;
        double eps = 1e-8;
        double[] w = W0.clone();
        double[] m = new double[3];
        double[] v = new double[3];
        double[][] expected = new double[STEPS][];
        for (int s = 0; s < STEPS; s++) {
            int t = s + 1;
            double[] next = new double[3];
            for (int i = 0; i < 3; i++) {
                double g = grad(w, i);
                m[i] = b1 * m[i] + (1 - b1) * g;
                v[i] = b2 * v[i] + (1 - b2) * g * g;
                double mHat = m[i] / (1 - Math.pow(b1, t));
                double vHat = v[i] / (1 - Math.pow(b2, t));
                next[i] = w[i] * (1 - lr * weightDecay) - lr * mHat / (Math.sqrt(vHat) + eps);
            }
            w = next;
            expected[s] = w.clone();
        }
        return expected;
    }

    @Test
    void adam() {
        assertClose(adamByHand(0.05, 0), train(new Adam(0.05)));
    }

    @Test
    void adamW() {
        double[][] expected = adamByHand(0.05, 0.1);
        assertClose(expected, train(new AdamW(0.05, 0.1f)));
        assertNotEquals(adamByHand(0.05, 0)[STEPS - 1][2], expected[STEPS - 1][2], 1e-4, "the decay matters");
    }

    @Test
    void theScheduleSetsEachStepsLearningRate() {
        // L = mean(w * x) has the constant gradient x / 3, so each step moves w by exactly lr_t * x / 3
        Program main = new Program();
        Layers nn = new Layers(main, new Program());
        Var x = nn.data("x", DType.F32, 3);
        Var w = nn.createParameter("w", DType.F32, new long[]{3}, Initializer.constant(1f));
        LrSchedule schedule = LrSchedule.stepDecay(0.4, 2, 0.5).withWarmup(2, 0.1);
        new SGD(schedule, 0f).minimize(nn.mean(nn.mul(w, x)));
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(nn.startup(), scope);
        Tensor feed = Tensor.of(new float[]{3, 3, 3}, 3);
        double[] lrs = {0.1, 0.25, 0.4, 0.4, 0.2, 0.2, 0.1};
        for (double lr : lrs) {
            double before = scope.get("w").getDouble(0);
            exe.run(main, scope, Map.of("x", feed), List.of());
            assertEquals(lr, before - scope.get("w").getDouble(0), 1e-6);
        }
        assertEquals(lrs.length, scope.get(Optimizer.STEP_VAR).getLong(0), "the step counter counts runs");
    }

    /** An embedding trained with SGD: a SelectedRows gradient must give the dense gradient's parameters. */
    private static Tensor trainEmbedding(boolean sparse) {
        return trainEmbedding(sparse, new SGD(0.5), 3);
    }

    private static Tensor trainEmbedding(boolean sparse, Optimizer opt, int steps) {
        Program main = new Program().setRandomSeed(11);
        Layers nn = new Layers(main, new Program());
        Var ids = nn.data("ids", DType.I64, -1, 1);
        Var c = nn.data("c", DType.F32, -1, 4);
        Var emb = nn.embedding(ids, 7, 4, sparse);
        opt.minimize(nn.mean(nn.mul(nn.mul(emb, emb), c)));
        Var grad = main.globalBlock().var("embedding_0.w_0@GRAD");
        assertEquals(sparse ? VarKind.SELECTED_ROWS : VarKind.DENSE, grad.kind());
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(nn.startup(), scope);
        long[][] batches = {{1, 3, 1, 5, 0}, {3, 3, 6}, {2, 1}};
        for (int s = 0; s < steps; s++) {
            Tensor cs = TestTensors.uniform(100 + s, batches[s].length, 4);
            exe.run(main, scope, Map.of("ids", Tensor.ofLongs(batches[s], batches[s].length, 1), "c", cs), List.of());
        }
        return scope.get("embedding_0.w_0").copy();
    }

    @Test
    void sparseSgdOnAnEmbeddingMatchesDense() {
        Tensor dense = trainEmbedding(false);
        Tensor sparse = trainEmbedding(true);
        assertArrayEquals(dense.toFloatArray(), sparse.toFloatArray(), 1e-6f);
        Program init = new Program().setRandomSeed(11);
        Layers nn = new Layers(init, new Program());
        nn.embedding(nn.data("ids", DType.I64, -1, 1), 7, 4, true);
        Scope scope = new Scope();
        new Executor().run(nn.startup(), scope);
        Tensor w0 = scope.get("embedding_0.w_0");
        for (int j = 0; j < 4; j++) {
            assertEquals(w0.getFloat(4 * 4 + j), sparse.getFloat(4 * 4 + j), 0, "row 4 is never looked up");
            assertNotEquals(w0.getFloat(3 * 4 + j), sparse.getFloat(3 * 4 + j), "row 3 is trained");
        }
    }

    @Test
    void lazyAdamOnASparseEmbeddingUpdatesOnlyTheLookedUpRows() {
        Tensor w0 = trainEmbedding(false, new SGD(0), 1);
        Tensor lazy = trainEmbedding(true, new Adam(LrSchedule.constant(0.1), 0.9f, 0.999f, 1e-8f, true), 2);
        Tensor dense = trainEmbedding(false, new Adam(LrSchedule.constant(0.1), 0.9f, 0.999f, 1e-8f, false), 2);
        Tensor denseOneStep = trainEmbedding(false, new Adam(LrSchedule.constant(0.1), 0.9f, 0.999f, 1e-8f, false), 1);
        for (int row = 0; row < 7; row++) {
            for (int j = 0; j < 4; j++) {
                int i = row * 4 + j;
                switch (row) {
                    // row 3 is in both batches; row 6 only in the second, before which dense Adam's moments stay 0
                    case 3, 6 -> assertEquals(dense.getFloat(i), lazy.getFloat(i), 1e-6, "row " + row);
                    // rows of the first batch only: dense Adam keeps moving them on its moments, lazy Adam does not
                    case 0, 1, 5 -> {
                        assertEquals(denseOneStep.getFloat(i), lazy.getFloat(i), 1e-6, "row " + row);
                        assertNotEquals(dense.getFloat(i), lazy.getFloat(i), "row " + row);
                    }
                    default -> assertEquals(w0.getFloat(i), lazy.getFloat(i), 0, "row " + row + " is never looked up");
                }
            }
        }
    }
}
