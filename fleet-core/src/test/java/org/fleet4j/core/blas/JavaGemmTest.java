package org.fleet4j.core.blas;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class JavaGemmTest extends GemmContractTest {

    private final JavaGemm gemm = new JavaGemm();

    @Override
    Gemm gemm() {
        return gemm;
    }

    /** Threads split C into stripes but keep each element's summation order, so results match bit for bit. */
    @Test
    void twoThreadsGiveBitIdenticalResults() {
        GemmCase c = new GemmCase(true, false, 257, 301, 290, 1f, 0.5f, 1, 2, 3, 4, 5, 6, 99L);
        GemmCase wide = new GemmCase(false, true, 7, 20, 33, 1f, 0f, 0, 0, 0, 0, 0, 0, 98L);
        GemmCase narrow = new GemmCase(false, false, 300, 10, 50, 1f, 1f, 0, 0, 0, 0, 0, 0, 97L);
        for (GemmCase one : new GemmCase[]{c, wide, narrow}) {
            try (Arena arena = Arena.ofShared()) {
                GemmCase.Buffers serial = one.allocate(arena);
                GemmCase.Buffers parallel = one.allocate(arena);
                JavaGemm single = new JavaGemm();
                JavaGemm two = new JavaGemm();
                two.setThreads(2);
                one.run(single, serial);
                one.run(two, parallel);
                long floats = serial.c().byteSize() / Float.BYTES;
                for (long i = 0; i < floats; i++) {
                    assertEquals(Float.floatToRawIntBits(serial.c().getAtIndex(ValueLayout.JAVA_FLOAT, i)),
                            Float.floatToRawIntBits(parallel.c().getAtIndex(ValueLayout.JAVA_FLOAT, i)),
                            "float " + i + " of C for " + one);
                }
            }
        }
    }

    /** The contract's shapes with n = 10 and n = 1 go through the transposed path; these pin that down. */
    @Test
    void narrowOutputsAreComputedTransposed() {
        assertEquals(true, JavaGemm.transposedFits(64, 10));
        assertEquals(true, JavaGemm.transposedFits(784, 10));
        assertEquals(true, JavaGemm.transposedFits(7, 1));
        assertEquals(false, JavaGemm.transposedFits(64, 512));
        assertEquals(false, JavaGemm.transposedFits(10, 64));
    }

    @Test
    void confinedMemoryStaysOnTheCallingThread() {
        JavaGemm two = new JavaGemm();
        two.setThreads(2);
        GemmCase c = new GemmCase(false, false, 100, 100, 100, 1f, 0f, 0, 0, 0, 0, 0, 0, 5L);
        try (Arena arena = Arena.ofConfined()) {
            GemmCase.Buffers x = c.allocate(arena);
            MemorySegment originalC = arena.allocate(x.c().byteSize(), 64).copyFrom(x.c());
            c.run(two, x);
            c.verify(x, originalC, "JavaGemm, 2 threads, confined arena");
        }
    }

    @Test
    void acceptsHeapSegments() {
        float[] a = {1, 2, 3, 4, 5, 6};
        float[] b = {1, 0, 0, 1, 1, 1};
        float[] c = new float[4];
        gemm.sgemm(false, false, 2, 2, 3, 1f, MemorySegment.ofArray(a), 0, 3, MemorySegment.ofArray(b), 0, 2,
                0f, MemorySegment.ofArray(c), 0, 2);
        assertEquals(4f, c[0]);
        assertEquals(5f, c[1]);
        assertEquals(10f, c[2]);
        assertEquals(11f, c[3]);
    }

    @Test
    void namesTheVectorWidth() {
        assertEquals("BLAS: pure-Java vectorised (FloatVector " + JavaGemm.SPECIES.vectorBitSize() + "-bit, 1 thread)",
                gemm.description());
        JavaGemm two = new JavaGemm();
        two.setThreads(2);
        assertEquals("BLAS: pure-Java vectorised (FloatVector " + JavaGemm.SPECIES.vectorBitSize() + "-bit, 2 threads)",
                two.description());
    }
}
