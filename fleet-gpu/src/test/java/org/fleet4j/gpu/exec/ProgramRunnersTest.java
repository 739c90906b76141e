package org.fleet4j.gpu.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.ServiceLoader;
import org.fleet4j.core.device.CpuProgramRunner;
import org.fleet4j.core.device.Device;
import org.fleet4j.core.device.DeviceBuffer;
import org.fleet4j.core.device.DeviceUnavailableException;
import org.fleet4j.core.device.Devices;
import org.fleet4j.core.device.ProgramRunnerProvider;
import org.fleet4j.core.device.ProgramRunners;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.models.Mlp;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.gpu.GpuRuntime;
import org.fleet4j.strategy.DistributedStrategy;
import org.junit.jupiter.api.Test;

/** How a device name becomes a program runner, and what is said when it cannot. */
class ProgramRunnersTest {
    /** A device of a kind no runner provider serves. */
    private record OtherDevice(String kind) implements Device {
        @Override
        public String name() {
            return kind + ":0";
        }

        @Override
        public int ordinal() {
            return 0;
        }

        @Override
        public DeviceBuffer allocate(long bytes) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void free(DeviceBuffer buffer) {
        }

        @Override
        public void copyFromHost(MemorySegment src, DeviceBuffer dst, long dstOffset) {
        }

        @Override
        public void copyToHost(DeviceBuffer src, long srcOffset, MemorySegment dst) {
        }

        @Override
        public void synchronize() {
        }

        @Override
        public void close() {
        }
    }

    @Test
    void theCpuRunsOnTheExecutorAndTrains() {
        Mlp net = MlpPrograms.build(new int[]{8, 16, 3}, "sgd", 1, new DistributedStrategy());
        try (var runner = ProgramRunners.forDevice(Devices.cpu())) {
            assertInstanceOf(CpuProgramRunner.class, runner);
            Scope scope = new Scope();
            runner.run(net.startup(), scope);
            Tensor x = Tensor.zeros(4, 8);
            for (int i = 0; i < 32; i++) {
                x.setFloat(i, (i % 5) * 0.25f);
            }
            Tensor y = Tensor.ofLongs(new long[]{0, 1, 2, 1}, 4, 1);
            var feed = java.util.Map.of(net.image().name(), x, net.label().name(), y);
            float first = runner.run(net.main(), scope, feed, List.of(net.loss().name())).get(net.loss().name()).getFloat(0);
            float later = first;
            for (int i = 0; i < 30; i++) {
                later = runner.run(net.main(), scope, feed, List.of(net.loss().name())).get(net.loss().name()).getFloat(0);
            }
            assertTrue(later < first, "loss " + first + " -> " + later);
        }
    }

    @Test
    void theGpuKindHasTheGpuExecutorsProviderWhichTakesOnlyGpuDevices() {
        List<ProgramRunnerProvider> gpu = ServiceLoader.load(ProgramRunnerProvider.class).stream()
                .map(ServiceLoader.Provider::get).filter(p -> p.kind().equals("gpu")).toList();
        assertEquals(1, gpu.size());
        assertInstanceOf(GpuProgramRunnerProvider.class, gpu.get(0));
        var e = assertThrows(IllegalArgumentException.class, () -> gpu.get(0).create(Devices.cpu(), ExecContext.none()));
        assertTrue(e.getMessage().startsWith("the GPU executor runs on a GpuDevice, got cpu"), e.getMessage());
    }

    @Test
    void aKindWithoutARunnerIsRefusedNamingTheDevice() {
        var e = assertThrows(DeviceUnavailableException.class, () -> ProgramRunners.forDevice(new OtherDevice("npu")));
        assertEquals("no program runner for npu:0: the classpath has a device provider for 'npu' but no"
                + " ProgramRunnerProvider of that kind; see docs/GPU.md", e.getMessage());
    }

    /** Where there is no GPU (this development machine), asking for one names what is missing. */
    @Test
    void aGpuWithoutDriverIsRefusedNamingTheLibrary() {
        boolean driver;
        try {
            driver = GpuRuntime.deviceCount() > 0;
        } catch (DeviceUnavailableException e) {
            driver = false;
        }
        assumeTrue(!driver, "this machine has a GPU: the refusal is for machines without one");
        var e = assertThrows(DeviceUnavailableException.class, () -> Devices.find("gpu:0"));
        assertTrue(e.getMessage().contains("libcuda.so.1"), e.getMessage());
    }

    /** What the executor checks before a run (feeds, scope values) and writes back after it (updated parameters). */
    @Test
    void aPlanKnowsWhatMustBeFedAndWhichParametersItUpdates() {
        Mlp net = MlpPrograms.build(new int[]{8, 3}, "sgd", 1, new DistributedStrategy());
        GpuPlan plan = new GpuPlan(net.main(), null, List.of(), ring -> null, ExecContext.none());
        assertTrue(plan.readFirst.contains(net.image().name()) && plan.readFirst.contains(net.label().name()));
        assertTrue(plan.writtenPersistables.containsAll(List.of("fc_0.w_0", "fc_0.b_0")), plan.writtenPersistables.toString());
    }
}
