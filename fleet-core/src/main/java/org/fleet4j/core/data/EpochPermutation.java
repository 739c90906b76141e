package org.fleet4j.core.data;

/**
 * The sample order of one epoch, a function of (seed, epoch) only, so every rank of a job computes the same order
 * without talking to the others. Fisher-Yates driven by SplitMix64 (seeded with {@code mix(seed ^ mix(epoch + GOLDEN))}),
 * spelled out here rather than taken from java.util so that it never changes with the JDK.
 */
final class EpochPermutation {
    static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private EpochPermutation() {
    }

    /** Fills {@code order} with a permutation of 0..order.length-1 determined by seed and epoch. */
    static void fill(int[] order, long seed, long epoch) {
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        long state = mix(seed ^ mix(epoch + GOLDEN));
        for (int i = order.length - 1; i > 0; i--) {
            state += GOLDEN;
            int j = (int) Math.unsignedMultiplyHigh(mix(state), i + 1L);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
