package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.fleet4j.core.device.Devices;
import org.junit.jupiter.api.Test;

/**
 * With fleet4j-gpu on the classpath, a CPU run (and a scan of the device providers) must not load a single CUDA
 * class: checked in a fresh JVM with class-loading logged.
 */
class CpuPathLoadsNoCudaTest {
    /** Run in the child JVM: uses the CPU, and makes the ServiceLoader instantiate every provider. */
    public static void main(String[] args) {
        Devices.find("cpu").allocate(16);
        try {
            Devices.find("npu");
        } catch (IllegalArgumentException expected) {
            System.out.println("providers scanned: " + expected.getMessage());
        }
    }

    @Test
    void cpuRunsNeverLoadCudaClasses() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "--enable-native-access=ALL-UNNAMED", "-Xlog:class+load=info",
                "-cp", System.getProperty("java.class.path"), CpuPathLoadsNoCudaTest.class.getName())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("providers scanned: unknown device 'npu'; expected one of [cpu, gpu]"), out);
        assertTrue(out.contains("org.fleet4j.gpu.GpuDeviceProvider"), "the provider itself was loaded");
        assertFalse(out.contains("org.bytedeco"), "a CPU run loaded JavaCPP/CUDA classes");
    }
}
