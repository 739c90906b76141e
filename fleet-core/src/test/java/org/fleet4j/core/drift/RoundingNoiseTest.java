package org.fleet4j.core.drift;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

class RoundingNoiseTest {
    private static final float[] VALUES = {0.5f, -0.03f, 0f, 1e-3f, -7f, 0.25f, 3f, -0.5f};

    @Test
    void everyNonzeroValueMovesExactlyTheAskedUlpsBothWaysAndZerosStay() {
        Tensor t = Tensor.of(VALUES.clone());
        RoundingNoise.perturb(t, 3, new Random(1));
        int up = 0;
        int down = 0;
        for (int i = 0; i < VALUES.length; i++) {
            float x = VALUES[i];
            float y = t.getFloat(i);
            if (x == 0f) {
                assertEquals(0f, y);
                continue;
            }
            float threeUp = Math.nextUp(Math.nextUp(Math.nextUp(x)));
            float threeDown = Math.nextDown(Math.nextDown(Math.nextDown(x)));
            assertTrue(y == threeUp || y == threeDown, "value " + i + ": " + x + " -> " + y);
            if (y == threeUp) {
                up++;
            } else {
                down++;
            }
        }
        assertTrue(up > 0 && down > 0, "a random direction per value: " + up + " up, " + down + " down");
    }

    @Test
    void theSameSeedGivesTheSameNoise() {
        Tensor a = Tensor.of(VALUES.clone());
        Tensor b = Tensor.of(VALUES.clone());
        RoundingNoise.perturb(a, 1, new Random(7));
        RoundingNoise.perturb(b, 1, new Random(7));
        assertArrayEquals(a.toFloatArray(), b.toFloatArray());
    }

    @Test
    void onlyFloat32IsPerturbed() {
        Tensor d = Tensor.zeros(DType.F64, 2);
        assertThrows(IllegalArgumentException.class, () -> RoundingNoise.perturb(d, 1, new Random(1)));
    }
}
