package org.fleet4j.core.blas;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Transposes 8 x 8 blocks of floats with 256-bit vectors: three rounds of two-source shuffles exchange blocks
 * of 4, then 2, then 1 lanes between row pairs. About twice as fast as an element-by-element transpose, it
 * packs transposed operands for {@link JavaGemm}.
 */
final class Transpose8 {

    private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
    /** Whether the preferred vectors are 256-bit, the only width these shuffles are written for. */
    static final boolean AVAILABLE = FloatVector.SPECIES_PREFERRED.length() == 8;

    // Index i < 8 takes lane i of the first vector, i - 8 < 0 takes lane i + 8 - 8 of the second.
    private static final VectorShuffle<Float> LO4 = VectorShuffle.fromValues(S, 0, 1, 2, 3, -8, -7, -6, -5);
    private static final VectorShuffle<Float> HI4 = VectorShuffle.fromValues(S, 4, 5, 6, 7, -4, -3, -2, -1);
    private static final VectorShuffle<Float> LO2 = VectorShuffle.fromValues(S, 0, 1, -8, -7, 4, 5, -4, -3);
    private static final VectorShuffle<Float> HI2 = VectorShuffle.fromValues(S, 2, 3, -6, -5, 6, 7, -2, -1);
    private static final VectorShuffle<Float> LO1 = VectorShuffle.fromValues(S, 0, -8, 2, -6, 4, -4, 6, -2);
    private static final VectorShuffle<Float> HI1 = VectorShuffle.fromValues(S, 1, -7, 3, -5, 5, -3, 7, -1);

    private Transpose8() {
    }

    /**
     * dst[base + p*width + w] = src[w*kc + p] for w < rows (a multiple of 8) and p below kc rounded down to a
     * multiple of 8; returns that bound, so the caller finishes the last columns.
     */
    static int transpose(float[] src, int rows, int kc, float[] dst, int base, int width) {
        int done = kc & ~7;
        for (int w0 = 0; w0 < rows; w0 += 8) {
            for (int p0 = 0; p0 < done; p0 += 8) {
                int s0 = w0 * kc + p0;
                FloatVector r0 = FloatVector.fromArray(S, src, s0);
                FloatVector r1 = FloatVector.fromArray(S, src, s0 + kc);
                FloatVector r2 = FloatVector.fromArray(S, src, s0 + 2 * kc);
                FloatVector r3 = FloatVector.fromArray(S, src, s0 + 3 * kc);
                FloatVector r4 = FloatVector.fromArray(S, src, s0 + 4 * kc);
                FloatVector r5 = FloatVector.fromArray(S, src, s0 + 5 * kc);
                FloatVector r6 = FloatVector.fromArray(S, src, s0 + 6 * kc);
                FloatVector r7 = FloatVector.fromArray(S, src, s0 + 7 * kc);
                FloatVector t0 = r0.rearrange(LO4, r4);
                FloatVector t4 = r0.rearrange(HI4, r4);
                FloatVector t1 = r1.rearrange(LO4, r5);
                FloatVector t5 = r1.rearrange(HI4, r5);
                FloatVector t2 = r2.rearrange(LO4, r6);
                FloatVector t6 = r2.rearrange(HI4, r6);
                FloatVector t3 = r3.rearrange(LO4, r7);
                FloatVector t7 = r3.rearrange(HI4, r7);
                FloatVector u0 = t0.rearrange(LO2, t2);
                FloatVector u2 = t0.rearrange(HI2, t2);
                FloatVector u1 = t1.rearrange(LO2, t3);
                FloatVector u3 = t1.rearrange(HI2, t3);
                FloatVector u4 = t4.rearrange(LO2, t6);
                FloatVector u6 = t4.rearrange(HI2, t6);
                FloatVector u5 = t5.rearrange(LO2, t7);
                FloatVector u7 = t5.rearrange(HI2, t7);
                int d = base + p0 * width + w0;
                u0.rearrange(LO1, u1).intoArray(dst, d);
                u0.rearrange(HI1, u1).intoArray(dst, d + width);
                u2.rearrange(LO1, u3).intoArray(dst, d + 2 * width);
                u2.rearrange(HI1, u3).intoArray(dst, d + 3 * width);
                u4.rearrange(LO1, u5).intoArray(dst, d + 4 * width);
                u4.rearrange(HI1, u5).intoArray(dst, d + 5 * width);
                u6.rearrange(LO1, u7).intoArray(dst, d + 6 * width);
                u6.rearrange(HI1, u7).intoArray(dst, d + 7 * width);
            }
        }
        return done;
    }
}
