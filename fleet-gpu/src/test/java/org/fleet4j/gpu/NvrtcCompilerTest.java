package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NVRTC compiles every module to a cubin for the GPU at hand. Needs a GPU (JavaCPP's NVRTC binding links the driver). */
class NvrtcCompilerTest {
    @Test
    void everyModuleCompilesForThisDeviceAndIsCached(@TempDir Path dir) {
        GpuAssumptions.require(CudaLibrary.NVRTC);
        String arch = GpuRuntime.properties(0).arch();
        KernelCache cache = new KernelCache(new NvrtcCompiler(), dir);
        for (KernelModule m : KernelModule.all()) {
            assertTrue(KernelCache.isElf(cache.cubin(m, arch)), m.name());
        }
        assertEquals(KernelModule.NAMES.size(), cache.compilations());
        new KernelCache(new NvrtcCompiler(), dir).cubin(KernelModule.load("amp"), arch);
        var e = assertThrows(CudaException.class, () -> new NvrtcCompiler().compileToCubin("broken",
                "extern \"C\" __global__ void f() { undefined_thing(); }", arch));
        assertTrue(e.getMessage().contains("could not compile kernel module broken for " + arch), e.getMessage());
        assertTrue(e.getMessage().contains("undefined_thing"), "the compile log is included: " + e.getMessage());
    }
}
