package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class GradientBucketerTest {
    private static final List<String> G = List.of("a", "b", "c", "d", "e", "f");

    private static List<List<String>> split(GradientBucketer b, Long... bytes) {
        return b.split(G.subList(0, bytes.length), List.of(bytes)).stream().map(GradientBucket::grads).toList();
    }

    @Test
    void closesABucketBeforeItPassesTheByteCap() {
        GradientBucketer b = new GradientBucketer(100, 50, 1, 1);
        assertEquals(List.of(List.of("a", "b"), List.of("c", "d"), List.of("e")), split(b, 60L, 40L, 50L, 50L, 10L));
    }

    @Test
    void closesABucketAtTheGradientCountCap() {
        GradientBucketer b = new GradientBucketer(1000, 2, 1, 1);
        assertEquals(List.of(List.of("a", "b"), List.of("c", "d"), List.of("e")), split(b, 1L, 1L, 1L, 1L, 1L));
    }

    @Test
    void theLastBucketHoldsOnlyWhatFitsItsOwnSize() {
        GradientBucketer b = new GradientBucketer(1000, 50, 25, 1);
        assertEquals(List.of(List.of("a", "b", "c"), List.of("d", "e")), split(b, 10L, 10L, 10L, 10L, 10L));
    }

    @Test
    void aGradientLargerThanTheCapGetsABucketOfItsOwn() {
        GradientBucketer b = new GradientBucketer(100, 50, 1, 1);
        assertEquals(List.of(List.of("a"), List.of("b"), List.of("c")), split(b, 500L, 20L, 300L));
    }

    @Test
    void bucketsGoRoundRobinToTheRings() {
        GradientBucketer b = new GradientBucketer(10, 50, 1, 3);
        List<Integer> rings = b.split(G, List.of(10L, 10L, 10L, 10L, 10L, 10L)).stream().map(GradientBucket::ringId).toList();
        assertEquals(List.of(0, 1, 2, 0, 1, 2), rings);
    }

    @Test
    void rejectsLimitsBelowOne() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new GradientBucketer(0, 1, 1, 1));
        assertEquals("bucket limits must be positive: maxBytes 0, maxCount 1, lastBytes 1, rings 1", e.getMessage());
    }
}
