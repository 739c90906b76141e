package org.fleet4j.core.blas;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BlasTest {

    @Test
    void javaCanBeForced() {
        assertInstanceOf(JavaGemm.class, Blas.select("java"));
        assertInstanceOf(JavaGemm.class, Blas.select(" JAVA "));
    }

    @Test
    void defaultPrefersOpenBlasWhenLoadable() {
        Gemm chosen = Blas.select(null);
        Class<?> expected = OpenBlasGemm.tryLoad().isPresent() ? OpenBlasGemm.class : JavaGemm.class;
        assertEquals(expected, chosen.getClass());
        assertEquals(expected, Blas.select("").getClass());
    }

    @Test
    void forcingOpenBlasEitherLoadsItOrSaysWhatToInstall() {
        if (OpenBlasGemm.tryLoad().isPresent()) {
            assertInstanceOf(OpenBlasGemm.class, Blas.select("openblas"));
        } else {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> Blas.select("openblas"));
            assertTrue(e.getMessage().contains("libopenblas0-pthread"), e.getMessage());
        }
    }

    @Test
    void unknownChoiceNamesTheSettingAndTheOptions() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Blas.select("mkl"));
        assertEquals("FLEET_BLAS=mkl is not a BLAS choice; use 'java' or 'openblas' (or leave it unset to pick the fastest)",
                e.getMessage());
    }

    @Test
    void processWideChoiceHasAStartUpLine() {
        assertTrue(Blas.description().startsWith("BLAS: "), Blas.description());
        assertEquals(Blas.get().description(), Blas.description());
    }
}
