package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BinaryMetricsTest {
    /** The definition: over every positive-negative pair, 1 when the positive scores higher, 1/2 for a tie. */
    private static double pairwiseAuc(float[] s, int[] y) {
        double wins = 0;
        long pairs = 0;
        for (int i = 0; i < s.length; i++) {
            for (int j = 0; j < s.length; j++) {
                if (y[i] == 1 && y[j] == 0) {
                    pairs++;
                    wins += s[i] > s[j] ? 1 : s[i] == s[j] ? 0.5 : 0;
                }
            }
        }
        return wins / pairs;
    }

    @Test
    void aucEqualsTheBruteForcePairwiseCountWithManyTiesAndSignedScores() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int trial = 0; trial < 50; trial++) {
            int n = 2 + rnd.nextInt(400);
            float[] s = new float[n];
            int[] y = new int[n];
            int levels = 1 + rnd.nextInt(12); // few distinct scores: large tied groups
            for (int i = 0; i < n; i++) {
                s[i] = (rnd.nextInt(levels) - levels / 2) * 0.75f;
                y[i] = rnd.nextDouble() < 0.3 + 0.05 * s[i] ? 1 : 0;
            }
            y[0] = 1;
            y[1] = 0;
            s[0] = trial % 2 == 0 ? -0f : 0f; // -0 and +0 are the same score
            assertEquals(pairwiseAuc(s, y), BinaryMetrics.auc(s, y, n), 1e-12, "trial " + trial);
        }
    }

    @Test
    void aucOfAPerfectAReversedAndAConstantScorer() {
        float[] s = {-2, -1, 0.5f, 3};
        assertEquals(1.0, BinaryMetrics.auc(s, new int[]{0, 0, 1, 1}, 4));
        assertEquals(0.0, BinaryMetrics.auc(s, new int[]{1, 1, 0, 0}, 4));
        assertEquals(0.5, BinaryMetrics.auc(new float[]{1, 1, 1}, new int[]{0, 1, 0}, 3));
        assertThrows(IllegalArgumentException.class, () -> BinaryMetrics.auc(s, new int[]{1, 1, 1, 1}, 4));
    }

    @Test
    void loglossOfLogitsMatchesTheProbabilityFormulaAndStaysFiniteForHugeLogits() {
        float[] z = {0f, 2f, -3f};
        int[] y = {1, 0, 0};
        double expected = (-Math.log(0.5) - Math.log(1 - 1 / (1 + Math.exp(-2))) - Math.log(1 - 1 / (1 + Math.exp(3)))) / 3;
        assertEquals(expected, BinaryMetrics.logloss(z, y, 3), 1e-12);
        assertEquals(200.0, BinaryMetrics.logloss(new float[]{-200f}, new int[]{1}, 1), 1e-9);
    }
}
