package org.fleet4j.core.blas;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * One sgemm problem with random matrices embedded in larger buffers (offsets, padded leading dimensions),
 * checked element by element against a double-precision reference.
 */
record GemmCase(boolean transA, boolean transB, int m, int n, int k, float alpha, float beta,
                int aOff, int bOff, int cOff, int padA, int padB, int padC, long seed) {

    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;
    /** Marks C's padding and the space around it: sgemm must leave those floats alone. */
    private static final float SENTINEL = -12345.5f;

    int lda() {
        return Math.max(1, transA ? m : k) + padA;
    }

    int ldb() {
        return Math.max(1, transB ? k : n) + padB;
    }

    int ldc() {
        return Math.max(1, n) + padC;
    }

    @Override
    public String toString() {
        return (transA ? "T" : "N") + (transB ? "T" : "N") + " m=" + m + " n=" + n + " k=" + k
                + " alpha=" + alpha + " beta=" + beta + " offsets=" + aOff + "/" + bOff + "/" + cOff
                + " ld=" + lda() + "/" + ldb() + "/" + ldc();
    }

    /** Buffers for this case; C starts as random values, or NaN where beta is 0 (it must not be read). */
    Buffers allocate(Arena arena) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int aRows = transA ? k : m;
        int bRows = transB ? n : k;
        MemorySegment a = random(arena, aOff + (long) aRows * lda() + 3, rnd);
        MemorySegment b = random(arena, bOff + (long) bRows * ldb() + 3, rnd);
        long cSize = cOff + (long) m * ldc() + 3;
        MemorySegment c = arena.allocate(cSize * Float.BYTES, 64);
        for (long i = 0; i < cSize; i++) {
            c.setAtIndex(F, i, SENTINEL);
        }
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                c.setAtIndex(F, cIndex(i, j), beta == 0f ? Float.NaN : (float) (rnd.nextDouble() * 2 - 1));
            }
        }
        return new Buffers(a, b, c);
    }

    private static MemorySegment random(Arena arena, long floats, SplittableRandom rnd) {
        MemorySegment s = arena.allocate(floats * Float.BYTES, 64);
        for (long i = 0; i < floats; i++) {
            s.setAtIndex(F, i, (float) (rnd.nextDouble() * 2 - 1));
        }
        return s;
    }

    long cIndex(int i, int j) {
        return cOff + (long) i * ldc() + j;
    }

    float opA(MemorySegment a, int i, int p) {
        return a.getAtIndex(F, aOff + (transA ? (long) p * lda() + i : (long) i * lda() + p));
    }

    float opB(MemorySegment b, int p, int j) {
        return b.getAtIndex(F, bOff + (transB ? (long) j * ldb() + p : (long) p * ldb() + j));
    }

    void run(Gemm gemm, Buffers x) {
        gemm.sgemm(transA, transB, m, n, k, alpha, x.a(), aOff, lda(), x.b(), bOff, ldb(), beta, x.c(), cOff, ldc());
    }

    /**
     * Compares x.c (after sgemm) with the reference computed from x.a, x.b and the original C. The tolerance is
     * the worst-case float rounding bound of a k-term dot product, (k + 3) * 2^-24 * sum of |terms|, whatever
     * the summation order; a wrong element is off by far more.
     */
    void verify(Buffers x, MemorySegment originalC, String who) {
        double u = Math.ulp(1f) / 2;
        long cSize = originalC.byteSize() / Float.BYTES;
        boolean[] inside = new boolean[(int) cSize];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double sum = 0;
                double magnitude = 0;
                for (int p = 0; p < k; p++) {
                    double term = (double) opA(x.a(), i, p) * opB(x.b(), p, j);
                    sum += term;
                    magnitude += Math.abs(term);
                }
                long at = cIndex(i, j);
                inside[(int) at] = true;
                double old = beta == 0f ? 0 : originalC.getAtIndex(F, at);
                double expected = alpha * sum + beta * old;
                double bound = (k + 3) * u * (Math.abs(alpha) * magnitude + Math.abs(beta * old)) + 1e-30;
                float actual = x.c().getAtIndex(F, at);
                if (!(Math.abs(actual - expected) <= bound)) {
                    throw new AssertionError(who + " " + this + ": C[" + i + "][" + j + "] = " + actual
                            + ", expected " + expected + " (tolerance " + bound + ")");
                }
            }
        }
        for (int at = 0; at < cSize; at++) {
            if (!inside[at]) {
                assertEquals(SENTINEL, x.c().getAtIndex(F, at),
                        () -> who + " " + this + " wrote outside C's window");
            }
        }
    }

    record Buffers(MemorySegment a, MemorySegment b, MemorySegment c) {
    }
}
