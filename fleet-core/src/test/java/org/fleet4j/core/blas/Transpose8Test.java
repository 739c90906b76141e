package org.fleet4j.core.blas;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class Transpose8Test {

    @Test
    void transposesWholeBlocksAndReportsWhereItStopped() {
        int rows = 16;
        int kc = 21;
        int width = 32;
        int base = 5;
        float[] src = new float[rows * kc];
        SplittableRandom rnd = new SplittableRandom(3);
        for (int i = 0; i < src.length; i++) {
            src[i] = (float) rnd.nextDouble();
        }
        float[] dst = new float[base + kc * width];
        int done = Transpose8.transpose(src, rows, kc, dst, base, width);
        assertEquals(16, done);
        for (int p = 0; p < kc; p++) {
            for (int w = 0; w < width; w++) {
                float expected = p < done && w < rows ? src[w * kc + p] : 0f;
                assertEquals(expected, dst[base + p * width + w], "p=" + p + " w=" + w);
            }
        }
    }
}
