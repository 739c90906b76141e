package org.fleet4j.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.group.BackendChoice;
import org.fleet4j.collective.group.BackendProvider;
import org.fleet4j.collective.group.DeviceBackendProvider;
import org.fleet4j.collective.group.Locality;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.collective.nccl.NcclBackend;
import org.fleet4j.collective.nccl.NcclLibrary;
import org.junit.jupiter.api.Test;

/** Backends are found through ServiceLoader; the device backend is opened only when a CUDA buffer meets a group. */
class DeviceBackendTest {
    private static final GroupOptions OPTIONS = GroupOptions.defaults().withTimeout(Duration.ofSeconds(20));
    private static final Duration WAIT = Duration.ofSeconds(20);

    /** Run in a child JVM: a CPU-only group that runs an allreduce and a barrier on host memory. */
    public static void main(String[] args) {
        try (ProcessGroup group = ProcessGroups.init(Role.single(), OPTIONS); Arena arena = Arena.ofConfined()) {
            MemorySegment x = arena.allocateFrom(ValueLayout.JAVA_FLOAT, 1f, 2f);
            group.allreduce(x, DataType.F32, ReduceOp.SUM).await(WAIT);
            group.barrier().await(WAIT);
            System.out.println("ran on " + group.backend());
        }
    }

    @Test
    void theBackendsAreFoundThroughServiceLoader() {
        List<Backend> host = ServiceLoader.load(BackendProvider.class).stream().map(p -> p.get().backend()).toList();
        assertEquals(Set.of(Backend.SHM, Backend.TCP, Backend.HIERARCHICAL), Set.copyOf(host));
        List<ServiceLoader.Provider<DeviceBackendProvider>> device =
                ServiceLoader.load(DeviceBackendProvider.class).stream().toList();
        assertEquals(List.of(NcclBackend.class), device.stream().map(ServiceLoader.Provider::type).toList());
        assertEquals(Backend.NCCL, device.getFirst().get().backend());
        assertEquals(Backend.TCP, Backend.parse(" TCP "));
        var e = assertThrows(IllegalArgumentException.class,
                () -> BackendChoice.of(Backend.parse("mpi"), Locality.of("a", "a")));
        assertTrue(e.getMessage().startsWith("unknown backend 'mpi'; expected auto or one of "), e.getMessage());
        assertTrue(e.getMessage().contains("shm") && e.getMessage().contains("hierarchical"), e.getMessage());
    }

    @Test
    void autoTakesTheAvailableBackendOfHighestPriorityAndSaysWhy() {
        BackendChoice oneHost = BackendChoice.of(Backend.AUTO, Locality.of("a", "a"));
        assertEquals(Backend.SHM, oneHost.backend());
        assertEquals("all 2 ranks on 1 host: shared memory", oneHost.reason());
        assertEquals(3, oneHost.considered().size(), oneHost.considered().toString());
        assertTrue(oneHost.considered().contains("hierarchical: for several hosts, the group has 2 ranks on 1 host"
                + " (not available)"), oneHost.considered().toString());
        assertEquals(Backend.HIERARCHICAL, BackendChoice.of(Backend.AUTO, Locality.of("a", "a", "b", "b")).backend());
        assertEquals(Backend.TCP, BackendChoice.of(Backend.AUTO, Locality.of("a", "a", "b")).backend());
        BackendChoice named = BackendChoice.of(Backend.TCP, Locality.of("a", "a"));
        assertEquals(Backend.TCP, named.backend());
        assertTrue(named.reason().startsWith("asked for by name"), named.reason());
    }

    @Test
    void aCpuOnlyGroupLoadsNoNcclOrCudaClass() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "--enable-native-access=ALL-UNNAMED", "-Xlog:class+load=info",
                "-cp", System.getProperty("java.class.path"), DeviceBackendTest.class.getName())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child JVM did not finish within 60 s");
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("ran on shm"), out);
        assertTrue(out.contains("org.fleet4j.collective.shm.ShmBackend"), "the host backend came from ServiceLoader");
        assertFalse(out.contains("org.fleet4j.collective.nccl."), "a CPU-only group loaded the NCCL backend");
        assertFalse(out.contains("org.bytedeco"), "a CPU-only group loaded JavaCPP/CUDA classes");
    }

    /** On a machine without CUDA (this one, in CI) the device collective names what is missing; CPU calls go on. */
    @Test
    void aDeviceCollectiveWithoutCudaNamesWhatIsMissing() {
        try {
            NcclLibrary.require();
            assumeTrue(false, "CUDA and NCCL load here: the refusal is for machines without them");
        } catch (CollectiveException expected) {
            // no CUDA here: the case under test
        }
        try (ProcessGroup group = ProcessGroups.init(Role.single(), OPTIONS); Arena arena = Arena.ofConfined()) {
            CudaBuffer onGpu = new CudaBuffer(0, 0x7f00_0000_1000L, 16, 0);
            var e = assertThrows(CollectiveException.class, () -> group.allreduce(onGpu, DataType.F32, ReduceOp.SUM));
            assertTrue(e.getMessage().matches("allreduce of 16 bytes on cuda:0 on group 'default' \\(rank 0 of 1\\):"
                    + " the nccl backend cannot .*lib\\w+\\.so\\.\\d+.*LD_LIBRARY_PATH.*"), e.getMessage());
            var again = assertThrows(CollectiveException.class, () -> group.deviceBackend(0));
            assertTrue(again.getMessage().endsWith(e.getMessage().substring(e.getMessage().indexOf(": the nccl"))),
                    again.getMessage());
            MemorySegment x = arena.allocateFrom(ValueLayout.JAVA_FLOAT, 3f);
            group.allreduce(x, DataType.F32, ReduceOp.SUM).await(WAIT);
            assertEquals(3f, x.get(ValueLayout.JAVA_FLOAT, 0));
        }
    }
}
