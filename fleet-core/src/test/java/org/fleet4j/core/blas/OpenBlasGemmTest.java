package org.fleet4j.core.blas;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class OpenBlasGemmTest extends GemmContractTest {

    private static Optional<OpenBlasGemm> loaded;

    @BeforeAll
    static void load() {
        loaded = OpenBlasGemm.tryLoad();
    }

    @Override
    Gemm gemm() {
        assumeTrue(loaded.isPresent(),
                "OpenBLAS is not installed (apt-get install libopenblas0-pthread); skipping OpenBLAS tests");
        return loaded.get();
    }

    @Test
    void describesVersionLibraryAndOneThreadByDefault() {
        Gemm g = gemm();
        assertEquals(1, g.threads());
        assertTrue(g.description().matches("BLAS: OpenBLAS \\d+\\.\\d+\\.\\d+ \\(libopenblas[.\\w]*, 1 thread\\)"),
                g.description());
    }

    @Test
    void refusesHeapSegmentsWithAClearMessage() {
        Gemm g = gemm();
        MemorySegment heap = MemorySegment.ofArray(new float[16]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> g.sgemm(false, false, 2, 2, 2, 1f, heap, 0, 2, heap, 0, 2, 0f, heap, 0, 2));
        assertTrue(e.getMessage().contains("matrix A is a heap segment"), e.getMessage());
    }

    @Test
    void badOverridePathNamesTheVariable() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> OpenBlasGemm.load("/nonexistent/libopenblas.so.0"));
        assertTrue(e.getMessage().startsWith("FLEET_BLAS_LIBRARY=/nonexistent/libopenblas.so.0 does not name a file"),
                e.getMessage());
    }

    @Test
    void overrideThatIsNotABlasLibraryIsRejected() {
        String libc = "/lib/x86_64-linux-gnu/libc.so.6";
        assumeTrue(new java.io.File(libc).isFile(), "no " + libc + " on this machine");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> OpenBlasGemm.load(libc));
        assertTrue(e.getMessage().contains("no symbol cblas_sgemm"), e.getMessage());
    }

    @Test
    void versionComesFromTheConfigString() {
        assertEquals("0.3.21", OpenBlasGemm.versionOf("OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64"));
        assertEquals("", OpenBlasGemm.versionOf("something else"));
    }
}
