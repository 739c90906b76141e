package org.fleet4j.examples;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A Zipf law over ranks 0..n-1: rank r has weight (r + 1)^-exponent, so a few ranks are drawn all the time and most
 * rarely, as ids are in click logs. Drawn by inverting the cumulative distribution (a binary search).
 */
final class ZipfLaw {
    private final double[] cdf;

    ZipfLaw(int n, double exponent) {
        cdf = new double[n];
        double total = 0;
        for (int r = 0; r < n; r++) {
            total += Math.pow(r + 1, -exponent);
            cdf[r] = total;
        }
        for (int r = 0; r < n; r++) {
            cdf[r] /= total;
        }
    }

    int draw(SplittableRandom rnd) {
        int r = Arrays.binarySearch(cdf, rnd.nextDouble());
        return Math.min(r < 0 ? -r - 1 : r, cdf.length - 1);
    }

    int size() {
        return cdf.length;
    }
}
