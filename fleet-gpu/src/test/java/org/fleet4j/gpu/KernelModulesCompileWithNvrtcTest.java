package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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
}
