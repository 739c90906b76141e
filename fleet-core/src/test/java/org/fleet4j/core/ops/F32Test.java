package org.fleet4j.core.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/**
 * F32's vector loops against the scalar formula, bit for bit, at every length from 0 to a few vector widths (so
 * both the vector body and the scalar tail run, at any SIMD width), and with NaN, infinities and signed zeros in
 * the data, where a blend or max that differs from the scalar code would show.
 */
class F32Test {
    private static final int MAX_LEN = 67;

    /** Random values in [-2, 2) with a special value every few elements. */
    private static MemorySegment data(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] special = {Float.NaN, 0f, -0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MIN_VALUE};
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = r.nextInt(5) == 0 ? special[r.nextInt(special.length)] : (float) (4 * r.nextDouble() - 2);
        }
        return Tensor.of(v, n).segment();
    }

    private static MemorySegment empty(int n) {
        return Tensor.zeros(Math.max(n, 1)).segment();
    }

    /** Same bits, except that every NaN is one NaN: hardware picks the payload of a NaN that inf - inf makes. */
    private static void assertBits(float expected, float actual, String what, int n, int i) {
        assertEquals(Float.floatToIntBits(expected), Float.floatToIntBits(actual),
                what + " at length " + n + ", element " + i + ": expected " + expected + " but got " + actual);
    }

    @Test
    void elementwiseLoopsMatchTheScalarFormula() {
        for (int n = 0; n <= MAX_LEN; n++) {
            MemorySegment a = data(n, n);
            MemorySegment b = data(1000 + n, n);
            MemorySegment out = empty(n);

            F32.add(a, b, out, n);
            for (int i = 0; i < n; i++) {
                assertBits(F32.get(a, i) + F32.get(b, i), F32.get(out, i), "add", n, i);
            }
            F32.sub(a, b, out, n);
            for (int i = 0; i < n; i++) {
                assertBits(F32.get(a, i) - F32.get(b, i), F32.get(out, i), "sub", n, i);
            }
            F32.mul(a, b, out, n);
            for (int i = 0; i < n; i++) {
                assertBits(F32.get(a, i) * F32.get(b, i), F32.get(out, i), "mul", n, i);
            }
            F32.div(a, b, out, n);
            for (int i = 0; i < n; i++) {
                assertBits(F32.get(a, i) / F32.get(b, i), F32.get(out, i), "div", n, i);
            }
            MemorySegment c = data(3000 + n, n);
            F32.divGradY(a, b, c, out, n);
            for (int i = 0; i < n; i++) {
                assertBits(-(F32.get(a, i) * F32.get(b, i) / F32.get(c, i)), F32.get(out, i), "divGradY", n, i);
            }
            F32.scale(a, 0.37f, out, n);
            for (int i = 0; i < n; i++) {
                assertBits(0.37f * F32.get(a, i), F32.get(out, i), "scale", n, i);
            }
            F32.relu(a, out, n);
            for (int i = 0; i < n; i++) {
                assertBits(Math.max(F32.get(a, i), 0f), F32.get(out, i), "relu", n, i);
            }
            F32.reluGrad(a, b, out, n);
            for (int i = 0; i < n; i++) {
                assertBits(F32.get(a, i) > 0f ? F32.get(b, i) : 0f, F32.get(out, i), "reluGrad", n, i);
            }
        }
    }

    @Test
    void sumAddsEveryElementOnce() {
        for (int n = 0; n <= MAX_LEN; n++) {
            SplittableRandom r = new SplittableRandom(n);
            float[] v = new float[n];
            java.math.BigDecimal exact = java.math.BigDecimal.ZERO;
            for (int i = 0; i < n; i++) {
                v[i] = (float) (1000 * r.nextDouble() - 500);
                exact = exact.add(new java.math.BigDecimal(v[i]));
            }
            double sum = F32.sum(n == 0 ? empty(0) : Tensor.of(v, n).segment(), n);
            assertEquals(exact.doubleValue(), sum, 1e-9, "sum at length " + n);
        }
        assertEquals(Float.POSITIVE_INFINITY, F32.sum(Tensor.of(new float[]{1, 2, Float.POSITIVE_INFINITY, 4, 5}, 5).segment(), 5));
        assertEquals(Double.NaN, F32.sum(Tensor.of(new float[]{1, 2, 3, 4, Float.NaN}, 5).segment(), 5));
    }

    @Test
    void inPlaceUpdatesMatchTheScalarFormula() {
        for (int n = 0; n <= MAX_LEN; n++) {
            MemorySegment x = data(n, n);
            MemorySegment y = data(2000 + n, n);
            float[] before = y.toArray(ValueLayout.JAVA_FLOAT);
            F32.axpy(-0.3f, x, y, n);
            for (int i = 0; i < n; i++) {
                assertBits(before[i] + -0.3f * F32.get(x, i), F32.get(y, i), "axpy", n, i);
            }
            before = y.toArray(ValueLayout.JAVA_FLOAT);
            F32.accumulate(y, x, n);
            for (int i = 0; i < n; i++) {
                assertBits(before[i] + F32.get(x, i), F32.get(y, i), "accumulate", n, i);
            }
            for (float wd : new float[]{0f, 0.01f}) {
                before = y.toArray(ValueLayout.JAVA_FLOAT);
                F32.sgd(y, x, 0.05f, wd, n);
                for (int i = 0; i < n; i++) {
                    float expected = before[i] - 0.05f * (F32.get(x, i) + wd * before[i]);
                    assertBits(expected, F32.get(y, i), "sgd (wd " + wd + ")", n, i);
                }
            }
        }
    }

    @Test
    void rowLoopsMatchTheScalarFormula() {
        for (int rows : new int[]{1, 3, 64}) {
            for (int cols = 1; cols <= MAX_LEN; cols++) {
                MemorySegment g = data(rows * 100L + cols, rows * cols);
                MemorySegment bias = data(7 + cols, cols);
                MemorySegment out = empty(rows * cols);
                F32.addRows(g, bias, out, rows, cols);
                for (int i = 0; i < rows * cols; i++) {
                    assertBits(F32.get(g, i) + F32.get(bias, i % cols), F32.get(out, i), "addRows " + rows + " x", cols, i);
                }
                MemorySegment sums = data(5, cols);  // stale values that sumRows must overwrite
                F32.sumRows(g, sums, rows, cols);
                for (int c = 0; c < cols; c++) {
                    float s = 0f;
                    for (int r = 0; r < rows; r++) {
                        s += F32.get(g, (long) r * cols + c);
                    }
                    assertBits(s, F32.get(sums, c), "sumRows " + rows + " x", cols, c);
                }
            }
        }
    }

    /**
     * bfloat16 both ways, bit for bit against BFloat16's scalar code: every one of the 65,536 bfloat16 values widened,
     * and random float bit patterns (NaNs with payloads, ties to even, values that round up to infinity) narrowed, at
     * every length up to a few vector widths and once at 100,003 elements.
     */
    @Test
    void bfloat16ConversionsMatchTheScalarOnesBitForBit() {
        MemorySegment every = MemorySegment.ofArray(new short[65536]);
        for (int b = 0; b < 65536; b++) {
            every.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, b, (short) b);
        }
        MemorySegment wide = empty(65536);
        F32.fromBf16(every, wide, 65536);
        for (int b = 0; b < 65536; b++) {
            assertEquals(Float.floatToRawIntBits(org.fleet4j.core.tensor.BFloat16.toFloat((short) b)),
                    Float.floatToRawIntBits(wide.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, b)), "bfloat16 " + b);
        }
        SplittableRandom r = new SplittableRandom(11);
        int[] edges = {0x7f800001, 0xff800001, 0x7fc00000, 0x7f7fffff, 0xff7fffff, 0x3f808000, 0x3f818000, 0x3f807fff,
                0x00008000, 0x80000000, 0x7f800000, 0x7fffffff};
        for (int n : new int[]{0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, MAX_LEN, 100_003}) {
            MemorySegment src = MemorySegment.ofArray(new int[Math.max(n, 1)]);
            for (int i = 0; i < n; i++) {
                int bits = r.nextInt(4) == 0 ? edges[r.nextInt(edges.length)] : r.nextInt();
                src.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, bits);
            }
            MemorySegment dst = MemorySegment.ofArray(new short[Math.max(n, 1)]);
            F32.toBf16(src, dst, n);
            for (int i = 0; i < n; i++) {
                float f = src.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
                assertEquals(org.fleet4j.core.tensor.BFloat16.fromFloat(f), dst.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i),
                        "float bits " + Integer.toHexString(Float.floatToRawIntBits(f)) + " at length " + n + ", element " + i);
            }
        }
    }
}
