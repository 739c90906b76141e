package org.fleet4j.examples;

import java.util.SplittableRandom;
import org.fleet4j.core.data.CriteoRow;

/**
 * The hidden logistic model behind {@code ctr_data}: a weight per categorical field and id, a weight per integer
 * feature (on the log scale of {@link CtrFeatures#dense}) and a bias. Ids follow a Zipf law over each field's
 * vocabulary, as real click logs do; a row's label is drawn from the sigmoid of its score, so no model can beat
 * the planted one on average.
 */
final class PlantedCtrModel {
    static final double ZIPF_EXPONENT = 1.1;
    static final double MISSING = 0.05;
    private static final double BIAS = -1.4;
    private static final double ID_WEIGHT_SD = 0.3;
    private static final double DENSE_WEIGHT_SD = 0.15;

    private final long seed;
    private final double[][] idWeights = new double[CriteoRow.SPARSE][];
    private final ZipfLaw[] zipf = new ZipfLaw[CriteoRow.SPARSE];
    private final double[] denseWeights = new double[CriteoRow.DENSE];

    PlantedCtrModel(long seed) {
        this.seed = seed;
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int f = 0; f < CriteoRow.SPARSE; f++) {
            int vocab = 3 << (f % 10); // 3 to 1536 ids, a spread of field sizes as in Criteo
            idWeights[f] = new double[vocab];
            for (int r = 0; r < vocab; r++) {
                idWeights[f][r] = ID_WEIGHT_SD * gaussian(rnd);
            }
            zipf[f] = new ZipfLaw(vocab, ZIPF_EXPONENT);
        }
        for (int j = 0; j < CriteoRow.DENSE; j++) {
            denseWeights[j] = DENSE_WEIGHT_SD * gaussian(rnd);
        }
    }

    /**
     * Draws one row's features into {@code ranks} (the Zipf rank of each field's id, -1 when missing) and
     * {@code dense} (where {@code denseMissing} is false), and returns the row's planted score (its logit).
     */
    double sample(SplittableRandom rnd, int[] ranks, long[] dense, boolean[] denseMissing) {
        double score = BIAS;
        for (int j = 0; j < CriteoRow.DENSE; j++) {
            denseMissing[j] = rnd.nextDouble() < MISSING;
            if (denseMissing[j]) {
                continue;
            }
            // counts and durations: heavy-tailed non-negative integers; I2 goes down to -3 as in Criteo
            long x = (long) Math.floor(Math.expm1(Math.abs(gaussian(rnd)) * (1 + j % 4))) - (j == 1 ? 3 : 0);
            dense[j] = x;
            score += denseWeights[j] * CtrFeatures.dense(x, false);
        }
        for (int f = 0; f < CriteoRow.SPARSE; f++) {
            if (rnd.nextDouble() < MISSING) {
                ranks[f] = -1;
                continue;
            }
            ranks[f] = zipf[f].draw(rnd);
            score += idWeights[f][ranks[f]];
        }
        return score;
    }

    /** The 8-digit hexadecimal id that stands for rank {@code rank} of field {@code field} in the files. */
    String token(int field, int rank) {
        int id = (int) CtrFeatures.mix(seed * 0x9E3779B97F4A7C15L + ((long) field << 32) + rank);
        String hex = Integer.toHexString(id);
        return "0".repeat(8 - hex.length()) + hex;
    }

    static double sigmoid(double z) {
        return 1 / (1 + Math.exp(-z));
    }

    private static double gaussian(SplittableRandom rnd) {
        // Box-Muller on the seeded stream, so the data depends on the seed alone
        double u = 1 - rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd.nextDouble());
    }
}
