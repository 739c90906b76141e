package org.fleet4j.core.blas;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** What every {@link Gemm} must do; one subclass per implementation. */
abstract class GemmContractTest {

    /**
     * Odd sizes around JavaGemm's micro-tile (2 x 32 with 256-bit vectors) and cache blocks (KC 128, MC 256,
     * NC 4096), plus the MLP's.
     */
    private static final int[][] SHAPES = {
            {1, 1, 1}, {1, 7, 33}, {7, 1, 65}, {33, 65, 7}, {65, 33, 1}, {6, 16, 8}, {2, 32, 128}, {12, 64, 256},
            {13, 17, 300}, {270, 64, 19}, {121, 47, 513}, {3, 4200, 5},
            {64, 10, 512}, {64, 512, 784}, {784, 10, 64},
    };
    private static final float[][] ALPHA_BETA = {{1f, 0f}, {1f, 1f}, {-0.5f, 2f}, {1.5f, -0.25f}};

    abstract Gemm gemm();

    @TestFactory
    Stream<DynamicTest> matchesReferenceOnEveryTransposeAndShape() {
        List<GemmCase> cases = new ArrayList<>();
        SplittableRandom rnd = new SplittableRandom(42);
        for (int[] s : SHAPES) {
            for (int t = 0; t < 4; t++) {
                float[] ab = ALPHA_BETA[rnd.nextInt(ALPHA_BETA.length)];
                boolean padded = rnd.nextBoolean();
                cases.add(new GemmCase((t & 1) != 0, (t & 2) != 0, s[0], s[1], s[2], ab[0], ab[1],
                        padded ? rnd.nextInt(1, 20) : 0, padded ? rnd.nextInt(1, 20) : 0, padded ? rnd.nextInt(1, 20) : 0,
                        padded ? rnd.nextInt(1, 9) : 0, padded ? rnd.nextInt(1, 9) : 0, padded ? rnd.nextInt(1, 9) : 0,
                        rnd.nextLong()));
            }
        }
        return cases.stream().map(c -> DynamicTest.dynamicTest(c.toString(), () -> check(gemm(), c)));
    }

    @TestFactory
    Stream<DynamicTest> alphaAndBetaVariations() {
        float[][] variations = {{1f, 0f}, {0f, 0.5f}, {0f, 0f}, {2f, 1f}, {-1f, -1f}, {0.25f, 3f}};
        return Stream.of(variations).map(ab -> DynamicTest.dynamicTest("alpha=" + ab[0] + " beta=" + ab[1],
                () -> check(gemm(), new GemmCase(false, true, 19, 23, 29, ab[0], ab[1], 3, 5, 7, 2, 4, 6, 7L))));
    }

    @Test
    void zeroDepthScalesCByBeta() {
        check(gemm(), new GemmCase(false, false, 5, 9, 0, 1f, 0.5f, 0, 0, 0, 0, 0, 0, 11L));
        check(gemm(), new GemmCase(true, false, 5, 9, 0, 1f, 0f, 0, 0, 2, 0, 0, 3, 12L));
    }

    @Test
    void emptyOutputTouchesNothing() {
        check(gemm(), new GemmCase(false, false, 0, 9, 4, 1f, 1f, 0, 0, 0, 0, 0, 0, 13L));
        check(gemm(), new GemmCase(false, true, 6, 0, 4, 1f, 1f, 0, 0, 0, 0, 0, 0, 14L));
    }

    @Test
    void badLeadingDimensionIsRejectedBeforeTouchingMemory() {
        // the implementation is found outside assertThrows, so a missing one skips the test instead of failing it
        Gemm g = gemm();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(1024 * Float.BYTES, 64);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> g.sgemm(false, false, 4, 8, 6, 1f, s, 0, 5, s, 0, 8, 0f, s, 0, 8));
            assertTrue(e.getMessage().contains("lda=5") && e.getMessage().contains("6"), e.getMessage());
            IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
                    () -> g.sgemm(false, true, 16, 16, 16, 1f, s, 0, 16, s, 0, 16, 0f, s, 900, 16));
            assertTrue(small.getMessage().contains("matrix C") && small.getMessage().contains("1156"), small.getMessage());
        }
    }

    @Test
    void reportsAndChangesThreads() {
        Gemm g = gemm();
        int before = g.threads();
        try {
            g.setThreads(2);
            assertEquals(2, g.threads());
            check(g, new GemmCase(false, false, 130, 150, 70, 1f, 0.5f, 1, 2, 3, 1, 2, 3, 21L));
            check(g, new GemmCase(true, true, 200, 9, 31, 1f, 0f, 0, 0, 0, 0, 0, 0, 22L));
        } finally {
            g.setThreads(before);
        }
        assertThrows(IllegalArgumentException.class, () -> g.setThreads(0));
        assertTrue(g.description().startsWith("BLAS: " + g.name()), g.description());
    }

    static void check(Gemm gemm, GemmCase c) {
        try (Arena arena = Arena.ofShared()) {
            GemmCase.Buffers x = c.allocate(arena);
            MemorySegment originalC = arena.allocate(x.c().byteSize(), 64).copyFrom(x.c());
            c.run(gemm, x);
            c.verify(x, originalC, gemm.name());
        }
    }
}
