package org.fleet4j.core.ops;

import java.util.SplittableRandom;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/** Seeded random tensors for op tests. */
final class TestTensors {
    private TestTensors() {
    }

    /** Uniform values in [-1, 1). */
    static Tensor uniform(long seed, long... shape) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] v = new float[(int) Shapes.numel(shape)];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (2 * r.nextDouble() - 1);
        }
        return Tensor.of(v, shape);
    }

    /** Uniform values with |v| in [0.1, 1): away from kinks at 0 (relu) that finite differences cannot cross. */
    static Tensor awayFromZero(long seed, long... shape) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] v = new float[(int) Shapes.numel(shape)];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) ((0.1 + 0.9 * r.nextDouble()) * (r.nextBoolean() ? 1 : -1));
        }
        return Tensor.of(v, shape);
    }

    /** Uniform values in [lo, hi). */
    static Tensor range(long seed, double lo, double hi, long... shape) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] v = new float[(int) Shapes.numel(shape)];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (lo + (hi - lo) * r.nextDouble());
        }
        return Tensor.of(v, shape);
    }

    /** The values -1 + 2 i / n, shuffled: no two elements closer than 2 / n (max pooling's finite differences). */
    static Tensor distinct(long seed, long... shape) {
        int n = (int) Shapes.numel(shape);
        java.util.List<Integer> order = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            order.add(i);
        }
        java.util.Collections.shuffle(order, new java.util.Random(seed));
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[order.get(i)] = -1f + 2f * i / n;
        }
        return Tensor.of(v, shape);
    }
}
