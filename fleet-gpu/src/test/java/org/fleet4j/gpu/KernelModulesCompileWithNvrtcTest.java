package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.device.DeviceUnavailableException;
import org.junit.jupiter.api.Test;

/**
 * Every kernel module compiles with NVRTC, as {@link NvrtcCompiler} compiles it at run time (same options), to a cubin
 * for Ampere (sm_80) and Hopper (sm_90), and Blackwell (sm_100) where NVRTC knows it (12.8 on), holding every entry
 * point. NVRTC needs no GPU; the test skips where no libnvrtc is installed ({@code scripts/nvrtc-check.sh} installs
 * one and runs it).
 */
class KernelModulesCompileWithNvrtcTest {

    @Test
    void everyModuleCompilesForAmpereAndHopper() {
        NvrtcLibrary nvrtc = NvrtcLibrary.find();
        assumeTrue(nvrtc != null, "no libnvrtc.so.N in $CUDA_HOME/lib64, /usr/local/cuda/lib64 or"
                + " /usr/lib/x86_64-linux-gnu: run scripts/nvrtc-check.sh to install one and check the kernels");
        System.out.println("kernel modules compiled with " + nvrtc.identity());
        List<String> archs = nvrtc.atLeast(12, 8) ? List.of("sm_80", "sm_90", "sm_100") : List.of("sm_80", "sm_90");
        System.out.println("kernel modules compiled for " + archs);
        List<String> failures = new ArrayList<>();
        for (KernelModule m : KernelModule.all()) {
            for (String arch : archs) {
                try {
                    String text = new String(nvrtc.compileToCubin(m.name(), m.source(), arch), StandardCharsets.ISO_8859_1);
                    assertTrue(text.startsWith("\u007fELF"), m.name() + " for " + arch + ": the cubin is no ELF file");
                    for (String entry : m.entryPoints()) {
                        if (!text.contains(".text." + entry + "\0")) {
                            failures.add(m.name() + " for " + arch + ": no code for entry point " + entry);
                        }
                    }
                } catch (CudaException e) {
                    failures.add(e.getMessage());
                }
            }
        }
        if (!failures.isEmpty()) {
            fail(failures.size() + " kernel module compilations failed:\n" + String.join("\n", failures));
        }
    }

    /**
     * The production compiler, through JavaCPP's NVRTC binding, wherever that binding links: on a GPU machine, or
     * where scripts/nvrtc-check.sh --cuda13 provides CUDA 13's libraries and a no-device stand-in for the driver (the
     * binding links libcuda.so.1, NVRTC itself never calls it).
     */
    @Test
    void nvrtcCompilerCompilesEveryModuleThroughItsBinding() {
        try {
            CudaLoader.require(CudaLibrary.NVRTC);
        } catch (DeviceUnavailableException e) {
            assumeTrue(false, "JavaCPP's NVRTC binding does not link here: " + e.getMessage());
        }
        NvrtcCompiler nvrtc = new NvrtcCompiler();
        System.out.println("kernel modules compiled through JavaCPP with " + nvrtc.identity());
        for (KernelModule m : KernelModule.all()) {
            for (String arch : List.of("sm_80", "sm_90")) {
                String text = new String(nvrtc.compileToCubin(m.name(), m.source(), arch), StandardCharsets.ISO_8859_1);
                for (String entry : m.entryPoints()) {
                    assertTrue(text.contains(".text." + entry + "\0"), m.name() + " for " + arch + ": no code for " + entry);
                }
            }
        }
        var e = assertThrows(CudaException.class, () -> nvrtc.compileToCubin("broken",
                "extern \"C\" __global__ void f() { undefined_thing(); }", "sm_90"));
        assertTrue(e.getMessage().contains("undefined_thing"), "the compile log is included: " + e.getMessage());
    }
}
