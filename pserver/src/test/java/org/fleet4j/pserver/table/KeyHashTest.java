package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.LongUnaryOperator;
import org.junit.jupiter.api.Test;

/** Sequential, strided and power-of-two ids spread evenly over servers, where raw id % servers does not. */
class KeyHashTest {
    private static final int IDS = 200_000;

    private static int[] counts(LongUnaryOperator idOf, int servers, boolean raw) {
        int[] counts = new int[servers];
        for (long i = 0; i < IDS; i++) {
            long id = idOf.applyAsLong(i);
            counts[raw ? (int) Math.floorMod(id, (long) servers) : KeyHash.serverOf(id, servers)]++;
        }
        return counts;
    }

    private static double worstDeviation(int[] counts) {
        double mean = (double) IDS / counts.length;
        double worst = 0;
        for (int c : counts) {
            worst = Math.max(worst, Math.abs(c - mean) / mean);
        }
        return worst;
    }

    @Test
    void sequentialAndStridedIdsSpreadEvenly() {
        for (int servers : new int[]{2, 3, 4, 5, 8, 16}) {
            int s = servers;
            LongUnaryOperator[] patterns = {i -> i, i -> i * s, i -> i * 1024, i -> i << 32, i -> (i << 20) + 7, i -> -i};
            for (int p = 0; p < patterns.length; p++) {
                double dev = worstDeviation(counts(patterns[p], servers, false));
                // binomial noise at 200k ids over 16 servers is about 1 %; 3 % is far from any skew
                assertTrue(dev < 0.03, "pattern " + p + " over " + servers + " servers deviates " + dev);
            }
        }
    }

    @Test
    void rawModuloPutsAStrideOnOneServer() {
        int[] raw = counts(i -> i * 4, 4, true);
        assertEquals(IDS, raw[0], "ids 0, 4, 8, ... all land on server 0 with id % 4");
    }

    @Test
    void serverIsAlwaysInRange() {
        for (long id : new long[]{0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE}) {
            for (int s = 1; s < 40; s++) {
                int server = KeyHash.serverOf(id, s);
                assertTrue(server >= 0 && server < s, id + " over " + s + " -> " + server);
            }
        }
    }
}
