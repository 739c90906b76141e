package org.fleet4j.gpu.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.models.Mlp;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.gpu.CudaLibrary;
import org.fleet4j.gpu.GpuAssumptions;
import org.fleet4j.gpu.GpuDevice;
import org.fleet4j.strategy.DistributedStrategy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * mnist's MLP trained step by step on the GPU and on the CPU from the same startup values and feeds: losses, accuracy
 * and parameters must agree. Needs a GPU with NVRTC and cuBLAS (and NCCL for the allreduce test).
 */
class GpuExecutorTest {
    private static final int[] MNIST = {784, 512, 512, 10};
    private static final int BATCH = 64;
    private static final int STEPS = 5;
    private static GpuDevice gpu;

    @BeforeEach
    void open() {
        GpuAssumptions.require(CudaLibrary.NVRTC);
        GpuAssumptions.require(CudaLibrary.CUBLAS);
        if (gpu == null) {
            gpu = GpuDevice.open(0, 0);
        }
    }

    @AfterAll
    static void close() {
        if (gpu != null) {
            gpu.close();
        }
    }

    private static Map<String, Tensor> feed(Mlp net, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        Tensor x = Tensor.zeros(BATCH, MNIST[0]);
        for (long i = 0; i < x.numel(); i++) {
            x.setFloat(i, (float) r.nextDouble());
        }
        Tensor y = Tensor.zeros(DType.I64, BATCH, 1);
        for (long i = 0; i < BATCH; i++) {
            y.setLong(i, r.nextInt(MNIST[MNIST.length - 1]));
        }
        return Map.of(net.image().name(), x, net.label().name(), y);
    }

    /**
     * Parameter tolerance: sums in another order (cuBLAS against OpenBLAS) differ by ~1e-6 relative; Adam turns a
     * gradient near zero into a step of up to lr whatever its size, so an element whose tiny gradient differs in sign
     * may differ by 2 lr (lr 0.001) after the steps.
     */
    private static float tolerance(String optimizer) {
        return optimizer.equals("adam") ? 2.5e-3f : 1e-4f;
    }

    /** Runs startup, STEPS training steps and the test program on both devices; returns the GPU executor's host ops. */
    private static void trainBothWays(Mlp net, String optimizer, GpuExecutor onGpu) {
        trainBothWays(net, optimizer, onGpu, ExecContext.none());
    }

    /** As {@link #trainBothWays(Mlp, String, GpuExecutor)}, the CPU's kernels made with the job's {@code context}. */
    private static void trainBothWays(Mlp net, String optimizer, GpuExecutor onGpu, ExecContext context) {
        Executor cpu = new Executor(ExecutorOptions.defaults(), context);
        Scope cpuScope = new Scope();
        Scope gpuScope = new Scope();
        cpu.run(net.startup(), cpuScope);
        onGpu.run(net.startup(), gpuScope);
        for (Var v : net.main().globalBlock().vars()) {
            if (v.isParameter()) {
                assertEquals(0f, maxDiff(cpuScope.get(v.name()), gpuScope.get(v.name())), "startup value of " + v.name());
            }
        }
        List<String> fetch = List.of(net.loss().name(), net.accuracy().name());
        for (int step = 0; step < STEPS; step++) {
            Map<String, Tensor> f = feed(net, step);
            Map<String, Tensor> c = cpu.run(net.main(), cpuScope, f, fetch);
            Map<String, Tensor> g = onGpu.run(net.main(), gpuScope, f, fetch);
            float lc = c.get(net.loss().name()).getFloat(0);
            float lg = g.get(net.loss().name()).getFloat(0);
            assertTrue(Float.isFinite(lg) && Math.abs(lc - lg) <= 1e-4f * Math.max(1f, Math.abs(lc)),
                    optimizer + " step " + step + ": loss on the CPU " + lc + ", on the GPU " + lg);
            assertEquals(c.get(net.accuracy().name()).getFloat(0), g.get(net.accuracy().name()).getFloat(0), 1f / BATCH,
                    "accuracy at step " + step);
        }
        onGpu.syncToScope(gpuScope);
        for (Var v : net.main().globalBlock().vars()) {
            if (v.isParameter()) {
                float d = maxDiff(cpuScope.get(v.name()), gpuScope.get(v.name()));
                assertTrue(d <= tolerance(optimizer), optimizer + ": " + v.name() + " differs by " + d + " after "
                        + STEPS + " steps");
            }
        }
        Map<String, Tensor> f = feed(net, 99);
        float ac = cpu.run(net.test(), cpuScope, f, List.of(net.accuracy().name())).get(net.accuracy().name()).getFloat(0);
        float ag = onGpu.run(net.test(), gpuScope, f, List.of(net.accuracy().name())).get(net.accuracy().name()).getFloat(0);
        assertEquals(ac, ag, 2f / BATCH, "test program's accuracy with the trained parameters");
    }

    private static float maxDiff(Tensor a, Tensor b) {
        assertTrue(a.hasShape(b.shape()), a.describe() + " vs " + b.describe());
        float d = 0;
        for (long i = 0; i < a.numel(); i++) {
            d = Math.max(d, Math.abs(a.getFloat(i) - b.getFloat(i)));
        }
        return d;
    }

    @ParameterizedTest
    @ValueSource(strings = {"sgd", "momentum", "adam"})
    void mnistTrainsAsOnTheCpu(String optimizer) {
        for (DistributedStrategy s : List.of(new DistributedStrategy(), MlpPrograms.allFusions())) {
            Mlp net = MlpPrograms.build(MNIST, optimizer, 1, s);
            try (GpuExecutor onGpu = new GpuExecutor(gpu)) {
                trainBothWays(net, optimizer, onGpu);
                assertEquals(java.util.Set.of(), onGpu.hostFallbackOps(net.main()), "the training step ran on the GPU only");
            }
        }
    }

    /**
     * A one-rank job's gradient allreduce (avg, bucketed by the compiler) on device memory, through the attached
     * group's device backend, which answers NCCL.
     */
    @Test
    void allreducesRunThroughTheAttachedGroupsDeviceBackend() {
        GpuAssumptions.requireNccl();
        try (ProcessGroup host = ProcessGroups.init(Role.single(), GroupOptions.defaults().withTimeout(Duration.ofSeconds(30)));
             GpuExecutor onGpu = new GpuExecutor(gpu)) {
            onGpu.attachGroup(0, host);
            Mlp net = MlpPrograms.build(MNIST, "sgd", 2, MlpPrograms.allFusions());
            // the CPU's c_allreduce kernel reduces through ring 0
            trainBothWays(net, "sgd", onGpu, ExecContext.builder().ring(0, host).build());
            assertEquals(java.util.Set.of(), onGpu.hostFallbackOps(net.main()));
            assertEquals(Backend.NCCL, host.deviceBackend(gpu.ordinal()));
        }
    }

    /**
     * The runner ProgramRunners gives for a GPU (what mnist and mlp_perf use) opens the device backend (NCCL) of the job's
     * ring 0 by itself: no group attached, no host fallback, the same training as the CPU's.
     */
    @Test
    void theGpuRunnerOpensNcclOverFleetsRingsByItself() {
        GpuAssumptions.requireNccl();
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv(RingGroups.VARIABLE) == null,
                RingGroups.VARIABLE + " is set: the default mode is what this test checks");
        try (ProcessGroup host = ProcessGroups.init(Role.single(), GroupOptions.defaults().withTimeout(Duration.ofSeconds(30)))) {
            ExecContext job = ExecContext.builder().ring(0, host).build();
            try (GpuExecutor onGpu = (GpuExecutor) org.fleet4j.core.device.ProgramRunners.forDevice(gpu, job,
                    GpuExecutorTest.class.getClassLoader())) {
                assertEquals(RingGroups.Mode.NCCL, onGpu.collectiveMode());
                Mlp net = MlpPrograms.build(MNIST, "sgd", 2, MlpPrograms.allFusions());
                trainBothWays(net, "sgd", onGpu, job);
                assertEquals(java.util.Set.of(), onGpu.hostFallbackOps(net.main()));
            }
        }
    }

    /** Changing the scope by hand (a loaded checkpoint) is seen by the next run once the executor is told. */
    @Test
    void scopeChangesReachTheDeviceAfterScopeChanged() {
        Mlp net = MlpPrograms.build(new int[]{8, 4}, "sgd", 1, new DistributedStrategy());
        try (GpuExecutor onGpu = new GpuExecutor(gpu)) {
            Scope scope = new Scope();
            onGpu.run(net.startup(), scope);
            Tensor w = scope.get("fc_0.w_0");
            w.fill(0);
            scope.get("fc_0.b_0").fill(0);
            onGpu.scopeChanged();
            Map<String, Tensor> f = Map.of(net.image().name(), Tensor.zeros(2, 8), net.label().name(),
                    Tensor.ofLongs(new long[]{0, 3}, 2, 1));
            float loss = onGpu.run(net.test(), scope, f, List.of(net.loss().name())).get(net.loss().name()).getFloat(0);
            assertEquals((float) Math.log(4), loss, 1e-6f, "all-zero logits over 4 classes");
        }
    }
}
