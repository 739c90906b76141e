package org.fleet4j.pserver.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;

/**
 * The pushes of the lost-update tests (a table's {@code ConcurrentPushTest}, a transport's
 * {@code TransportConcurrentPushTest}): batches of a few hot ids, repeats allowed, each row's gradient a small integer
 * in every column, so the sum every row must reach is exact in float and known in advance.
 */
public final class HotKeyPushes {
    private HotKeyPushes() {
    }

    /**
     * Fills {@code ids} and {@code grads} ({@code dim} floats an id) with the next batch of 1 to {@code hot.length}
     * ids drawn from {@code hot}, adds each id's gradient to {@code expected[k]} for its index k in {@code hot}, and
     * returns the batch's size.
     */
    public static int next(Random r, long[] hot, int dim, MemorySegment ids, MemorySegment grads, long[] expected) {
        int n = 1 + r.nextInt(hot.length);
        for (int i = 0; i < n; i++) {
            int k = r.nextInt(hot.length);
            int g = 1 + r.nextInt(3);
            ids.setAtIndex(ValueLayout.JAVA_LONG, i, hot[k]);
            for (int j = 0; j < dim; j++) {
                grads.setAtIndex(ValueLayout.JAVA_FLOAT, (long) i * dim + j, g);
            }
            expected[k] += g;
        }
        return n;
    }
}
