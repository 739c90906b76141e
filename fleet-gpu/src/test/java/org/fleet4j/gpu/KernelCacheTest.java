package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KernelCacheTest {
    /** Yields an ELF header followed by what it was asked to compile, and counts its calls. */
    static final class RecordingCompiler implements KernelCompiler {
        final List<String> calls = new ArrayList<>();
        String identity = "fake-nvrtc 13.1";

        @Override
        public byte[] compileToCubin(String moduleName, String source, String arch) {
            calls.add(moduleName + "@" + arch);
            byte[] body = (arch + "|" + source).getBytes(StandardCharsets.UTF_8);
            byte[] out = new byte[body.length + 16];
            out[0] = 0x7f;
            out[1] = 'E';
            out[2] = 'L';
            out[3] = 'F';
            System.arraycopy(body, 0, out, 16, body.length);
            return out;
        }

        @Override
        public String identity() {
            return identity;
        }
    }

    private static final KernelModule RELU = new KernelModule("relu", "extern \"C\" __global__ void relu(float* x) {}", List.of("relu"));

    @Test
    void compilesOncePerSourceArchAndCompiler(@TempDir Path dir) {
        RecordingCompiler compiler = new RecordingCompiler();
        KernelCache cache = new KernelCache(compiler, dir);
        byte[] first = cache.cubin(RELU, "sm_90");
        assertArrayEquals(first, cache.cubin(RELU, "sm_90"));
        cache.cubin(RELU, "sm_80");
        cache.cubin(new KernelModule("relu", RELU.source() + " ", RELU.entryPoints()), "sm_90");
        assertEquals(List.of("relu@sm_90", "relu@sm_80", "relu@sm_90"), compiler.calls);
        assertEquals(3, cache.compilations());

        KernelCache nextRun = new KernelCache(compiler, dir);
        assertArrayEquals(first, nextRun.cubin(RELU, "sm_90"));
        assertEquals(0, nextRun.compilations(), "read from disk");
        compiler.identity = "fake-nvrtc 13.2";
        new KernelCache(compiler, dir).cubin(RELU, "sm_90");
        assertEquals(4, compiler.calls.size(), "a new compiler version does not reuse old binaries");
    }

    @Test
    void aDamagedFileIsCompiledAgain(@TempDir Path dir) throws Exception {
        RecordingCompiler compiler = new RecordingCompiler();
        byte[] good = new KernelCache(compiler, dir).cubin(RELU, "sm_90");
        try (Stream<Path> files = Files.list(dir)) {
            Path file = files.filter(p -> p.toString().endsWith(".cubin")).findFirst().orElseThrow();
            assertTrue(file.getFileName().toString().startsWith("relu-sm_90-"), file.toString());
            Files.write(file, new byte[]{1, 2, 3});
        }
        assertArrayEquals(good, new KernelCache(compiler, dir).cubin(RELU, "sm_90"));
        assertEquals(2, compiler.calls.size());
    }

    @Test
    void memoryOnlyAndNotACubin() {
        KernelCompiler broken = new KernelCompiler() {
            @Override
            public byte[] compileToCubin(String moduleName, String source, String arch) {
                return ".version 8.0 .target sm_90".getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public String identity() {
                return "ptx-emitter";
            }
        };
        var e = assertThrows(IllegalStateException.class, () -> new KernelCache(broken, null).cubin(RELU, "sm_90"));
        assertTrue(e.getMessage().contains("not a cubin"), e.getMessage());
    }

    @Test
    void keysAndDefaultDir() {
        assertNotEquals(KernelCache.key("a", "sm_90", "x"), KernelCache.key("a", "sm_80", "x"));
        assertNotEquals(KernelCache.key("ab", "sm_90", "x"), KernelCache.key("a", "bsm_90", "x"), "parts are delimited");
        assertEquals(64, KernelCache.key("a", "sm_90", "x").length());
        assertEquals(Path.of("/tmp/k"), KernelCache.defaultDir(Map.of(KernelCache.DIR_ENV, "/tmp/k")));
        assertTrue(KernelCache.defaultDir(Map.of()).endsWith(Path.of(".cache", "fleet4j", "kernels")));
    }
}
