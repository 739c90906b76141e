package org.fleet4j.gpu.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.gpu.CudaLibrary;
import org.fleet4j.gpu.GpuAssumptions;
import org.fleet4j.gpu.GpuDevice;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Each op instance of {@link GpuOpCases} through the GPU executor against the CPU executor on the same inputs
 * (tolerance per case: 2e-5 relative to the larger of 1 and the value for float32, 1e-4 for batch norm's sums, 1e-2
 * for bfloat16 GEMMs). On a machine without a GPU the CPU half still runs, so
 * the cases themselves are checked: every program is valid and every fetched output is finite.
 */
class GpuOpsAgainstCpuTest {
    private static GpuDevice gpu;

    /** Ring 0 for the overlapped allreduce's case: the CPU's kernels (and the GPU's host path) reduce through it. */
    private static ProcessGroup ring0;
    /** The job whose ring 0 that is. */
    private static ExecContext job;

    @BeforeAll
    static void openRing0() {
        ring0 = ProcessGroups.init(Role.single(), GroupOptions.defaults().withTimeout(Duration.ofSeconds(20)));
        job = ExecContext.builder().ring(0, ring0).build();
    }

    @AfterAll
    static void close() {
        if (gpu != null) {
            gpu.close();
        }
        ring0.close();
    }

    private static Map<String, Tensor> copies(Map<String, Tensor> feed) {
        Map<String, Tensor> c = new LinkedHashMap<>();
        feed.forEach((k, v) -> c.put(k, v.copy()));
        return c;
    }

    @Test
    void everyOpTypeWithAGpuKernelHasACase() {
        Set<String> tested = new TreeSet<>();
        GpuOpCases.all().forEach(c -> c.program().globalBlock().ops().forEach(op -> tested.add(op.type())));
        Set<String> untested = new TreeSet<>(GpuKernelTable.gpuTypes());
        untested.removeAll(tested);
        assertEquals(Set.of(), untested);
    }

    @TestFactory
    Stream<DynamicTest> everyCaseRunsOnTheCpu() {
        return GpuOpCases.all().stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> {
            Map<String, Tensor> out = new Executor(ExecutorOptions.defaults(), job).run(c.program(), new Scope(), copies(c.feed()), c.fetch());
            if (!allFinite(c.feed().values())) {
                return; // a case of inf/nan handling: its outputs hold them on purpose
            }
            for (var e : out.entrySet()) {
                for (long i = 0; i < e.getValue().numel(); i++) {
                    assertTrue(Double.isFinite(e.getValue().getDouble(i)), c.name() + ": " + e.getKey() + "[" + i + "]");
                }
            }
        }));
    }

    private static boolean allFinite(java.util.Collection<Tensor> tensors) {
        for (Tensor t : tensors) {
            for (long i = 0; t.dtype().isFloating() && i < t.numel(); i++) {
                if (!Double.isFinite(t.getDouble(i))) {
                    return false;
                }
            }
        }
        return true;
    }

    @TestFactory
    Stream<DynamicTest> everyCaseMatchesTheCpuOnTheGpu() {
        return GpuOpCases.all().stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> {
            GpuAssumptions.require(CudaLibrary.NVRTC);
            GpuAssumptions.require(CudaLibrary.CUBLAS);
            if (gpu == null) {
                gpu = GpuDevice.open(0, 0);
            }
            Map<String, Tensor> cpu = new Executor(ExecutorOptions.defaults(), job).run(c.program(), new Scope(), copies(c.feed()), c.fetch());
            Map<String, Tensor> onGpu;
            boolean collective = c.program().globalBlock().ops().stream().anyMatch(op -> op.type().startsWith("c_"));
            if (collective) {
                GpuAssumptions.requireNccl();
            }
            // the rings as a training run has them (ProgramRunners): ring 0's collectives on its NCCL backend
            RingGroups rings = new RingGroups(RingGroups.Mode.NCCL, ring -> RingGroups.hostRing(job, ring),
                    host -> host.deviceBackend(gpu.ordinal()));
            try (GpuExecutor exe = new GpuExecutor(gpu, rings, job)) {
                onGpu = exe.run(c.program(), new Scope(), copies(c.feed()), c.fetch());
                assertTrue(exe.hostFallbackOps(c.program()).isEmpty(), c.name() + " fell back to the host: "
                        + exe.hostFallbackOps(c.program()));
            }
            for (String name : c.fetch()) {
                Tensor a = cpu.get(name);
                Tensor b = onGpu.get(name);
                assertTrue(a.dtype() == b.dtype() && a.hasShape(b.shape()), c.name() + ": " + name + " is " + b.describe()
                        + " on the GPU, " + a.describe() + " on the CPU");
                for (long i = 0; i < a.numel(); i++) {
                    double x = a.getDouble(i);
                    double y = b.getDouble(i);
                    assertTrue(Math.abs(x - y) <= c.tolerance() * Math.max(1, Math.abs(x)) || (Double.isNaN(x) && Double.isNaN(y))
                                    || x == y,
                            c.name() + ": " + name + "[" + i + "] is " + y + " on the GPU, " + x + " on the CPU");
                }
            }
        }));
    }
}
