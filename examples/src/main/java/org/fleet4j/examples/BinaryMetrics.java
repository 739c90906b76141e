package org.fleet4j.examples;

import java.util.Arrays;

/** Exact AUC and logloss of a binary classifier's logits against 0/1 labels. */
final class BinaryMetrics {
    private BinaryMetrics() {
    }

    /**
     * The area under the ROC curve, computed exactly from ranks (Mann-Whitney U): the probability that a random
     * positive scores above a random negative, a tie counting one half. Scores that tie share their average rank.
     */
    static double auc(float[] scores, int[] labels, int n) {
        long[] order = new long[n];
        long positives = 0;
        for (int i = 0; i < n; i++) {
            float s = scores[i];
            if (Float.isNaN(s)) {
                throw new IllegalArgumentException("score " + i + " is NaN; the model diverged (try a smaller --lr)");
            }
            int bits = Float.floatToIntBits(s == 0f ? 0f : s);
            int key = bits ^ ((bits >> 31) & 0x7fffffff); // ordered like the floats themselves
            order[i] = ((long) key << 32) | i;
            positives += labels[i];
        }
        long negatives = n - positives;
        if (positives == 0 || negatives == 0) {
            throw new IllegalArgumentException("AUC needs both classes; the " + n + " labels are all " + (positives == 0 ? 0 : 1));
        }
        Arrays.sort(order);
        double positiveRankSum = 0;
        int i = 0;
        while (i < n) {
            int j = i;
            long tiedPositives = 0;
            while (j < n && (order[j] >> 32) == (order[i] >> 32)) {
                tiedPositives += labels[(int) order[j]];
                j++;
            }
            double averageRank = (i + 1 + j) / 2.0; // ranks i+1..j
            positiveRankSum += tiedPositives * averageRank;
            i = j;
        }
        return (positiveRankSum - positives * (positives + 1) / 2.0) / ((double) positives * negatives);
    }

    /** The mean of -log p(label) with p = sigmoid(logit), computed from the logit so no probability rounds to 0 or 1. */
    static double logloss(float[] logits, int[] labels, int n) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            double z = logits[i];
            double softplus = Math.max(z, 0) + Math.log1p(Math.exp(-Math.abs(z)));
            sum += softplus - labels[i] * z;
        }
        return sum / n;
    }
}
