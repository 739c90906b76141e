package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.core.device.Devices;
import org.junit.jupiter.api.Test;

/**
 * With fleet4j-gpu on the classpath, a CPU run (a scan of the device providers, and collectives on a process group
 * whose nccl device backend is registered) must not load a single CUDA class: checked in a fresh JVM with class-loading
 * logged.
 */
class CpuPathLoadsNoCudaTest {
    /** Run in the child JVM: uses the CPU, makes the ServiceLoader instantiate every provider, runs a collective. */
    public static void main(String[] args) {
        Devices.find("cpu").allocate(16);
        try (ProcessGroup group = ProcessGroups.init(Role.single(), GroupOptions.defaults());
             Arena arena = Arena.ofConfined()) {
            group.allreduce(arena.allocate(16), DataType.F32, ReduceOp.SUM).await(Duration.ofSeconds(30));
            System.out.println("collective ran on " + group.backend());
        }
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
        assertTrue(out.contains("collective ran on shm"), out);
        assertFalse(out.contains("org.fleet4j.collective.nccl."), "a CPU run loaded the nccl backend");
        assertFalse(out.contains("org.bytedeco"), "a CPU run loaded JavaCPP/CUDA classes");
    }
}
