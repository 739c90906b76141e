package org.fleet4j.core.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.layers.Initializer;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** Initializers: reproducible from the program's seed, with Xavier and Kaiming ranges from the fan-in and fan-out. */
class InitializerTest {

    /** Startup values of parameters "a" and "b", both [fanIn, fanOut] = [300, 200]. */
    private static Tensor[] init(long seed, Initializer init) {
        Program main = new Program().setRandomSeed(seed);
        Layers nn = new Layers(main, new Program());
        nn.createParameter("a", DType.F32, new long[]{300, 200}, init);
        nn.createParameter("b", DType.F32, new long[]{300, 200}, init);
        Scope scope = new Scope();
        new Executor().run(nn.startup(), scope);
        return new Tensor[]{scope.get("a"), scope.get("b")};
    }

    @Test
    void theSameSeedGivesTheSameValues() {
        Tensor[] first = init(5, Initializer.xavierUniform());
        Tensor[] again = init(5, Initializer.xavierUniform());
        Tensor[] other = init(6, Initializer.xavierUniform());
        assertArrayEquals(first[0].toFloatArray(), again[0].toFloatArray());
        assertArrayEquals(first[1].toFloatArray(), again[1].toFloatArray());
        assertFalse(Arrays.equals(first[0].toFloatArray(), other[0].toFloatArray()), "another program seed");
        assertFalse(Arrays.equals(first[0].toFloatArray(), first[1].toFloatArray()), "each parameter its own seed");
    }

    private static double maxAbs(Tensor t) {
        double m = 0;
        for (long i = 0; i < t.numel(); i++) {
            m = Math.max(m, Math.abs(t.getDouble(i)));
        }
        return m;
    }

    private static double std(Tensor t) {
        double s = 0;
        double sq = 0;
        for (long i = 0; i < t.numel(); i++) {
            s += t.getDouble(i);
            sq += t.getDouble(i) * t.getDouble(i);
        }
        double mean = s / t.numel();
        return Math.sqrt(sq / t.numel() - mean * mean);
    }

    @Test
    void uniformRangesFillTheirLimit() {
        double xavier = Math.sqrt(6.0 / (300 + 200));
        double kaiming = Math.sqrt(6.0 / 300);
        for (var c : new Object[][]{{Initializer.xavierUniform(), xavier}, {Initializer.kaimingUniform(), kaiming}}) {
            Tensor t = init(1, (Initializer) c[0])[0];
            double limit = (double) c[1];
            assertTrue(maxAbs(t) <= limit * (1 + 1e-6), c[0] + ": max " + maxAbs(t) + " > " + limit);
            assertTrue(maxAbs(t) > limit * 0.99, c[0] + ": max " + maxAbs(t) + " does not reach " + limit);
            assertEquals(limit / Math.sqrt(3), std(t), limit * 0.02, c[0] + ": std of a uniform");
        }
    }

    @Test
    void normalStandardDeviations() {
        assertEquals(Math.sqrt(2.0 / 500), std(init(2, Initializer.xavierNormal())[0]), Math.sqrt(2.0 / 500) * 0.02);
        assertEquals(Math.sqrt(2.0 / 300), std(init(3, Initializer.kaimingNormal())[0]), Math.sqrt(2.0 / 300) * 0.02);
        Tensor n = init(4, Initializer.normal(3f, 0.5f))[0];
        assertEquals(0.5, std(n), 0.01);
        assertEquals(3.0, Arrays.stream(n.toDoubleArray()).average().orElseThrow(), 0.01);
    }

    @Test
    void constantAndUniform() {
        assertTrue(Arrays.stream(init(1, Initializer.constant(0.25f))[0].toDoubleArray()).allMatch(v -> v == 0.25));
        Tensor u = init(1, Initializer.uniform(2f, 3f))[0];
        assertTrue(Arrays.stream(u.toDoubleArray()).allMatch(v -> v >= 2 && v < 3));
    }
}
