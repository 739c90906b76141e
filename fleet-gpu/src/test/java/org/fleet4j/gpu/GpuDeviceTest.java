package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.fleet4j.core.device.Device;
import org.fleet4j.core.device.Devices;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Needs a GPU; skips with the reason otherwise. */
class GpuDeviceTest {
    @BeforeEach
    void gpu() {
        GpuAssumptions.requireGpu();
    }

    @Test
    void foundThroughDevicesAndCopiesRoundTrip() {
        try (Device d = Devices.find("gpu:0")) {
            GpuDevice gpu = assertInstanceOf(GpuDevice.class, d);
            assertTrue(gpu.properties().totalMemory() > 0);
            var buffer = gpu.allocate(4096);
            float[] values = new float[256];
            for (int i = 0; i < values.length; i++) {
                values[i] = i * 0.5f - 3;
            }
            gpu.copyFromHost(MemorySegment.ofArray(values), buffer, 1024); // a heap segment goes through staging
            MemorySegment back = Arena.ofAuto().allocate(1024);
            gpu.copyToHost(buffer, 1024, back);
            assertArrayEquals(values, back.toArray(ValueLayout.JAVA_FLOAT));
            assertEquals(4096, gpu.memoryStats().askedBytes());
            gpu.free(buffer);
            assertEquals(4096, gpu.memoryStats().cachedBytes());
        }
    }

    @Test
    void pinnedBuffersAndEvents() {
        try (GpuDevice gpu = GpuDevice.open(0, 0); PinnedHostBuffer pinned = new PinnedHostBuffer(1 << 20);
             CudaEvent start = new CudaEvent(); CudaEvent end = new CudaEvent()) {
            for (long i = 0; i < (1 << 18); i++) {
                pinned.segment().setAtIndex(ValueLayout.JAVA_INT, i, (int) i * 7);
            }
            var buffer = gpu.allocate(1 << 20);
            start.record(gpu.stream());
            gpu.copyFromHost(pinned.segment(), buffer, 0);
            gpu.zero(buffer.slice(0, 4));
            end.record(gpu.stream());
            end.synchronize();
            assertTrue(end.isDone());
            assertTrue(end.millisSince(start) >= 0);
            MemorySegment back = Arena.ofAuto().allocate(1 << 20);
            gpu.copyToHost(buffer, 0, back);
            assertEquals(0, back.getAtIndex(ValueLayout.JAVA_INT, 0));
            assertEquals(7 * 12345, back.getAtIndex(ValueLayout.JAVA_INT, 12345));
        }
    }

    @Test
    void outOfMemoryGivesTheFigures() {
        try (GpuDevice gpu = GpuDevice.open(0, 0)) {
            long tooMuch = gpu.properties().totalMemory() * 2;
            var e = assertThrows(DeviceOutOfMemoryException.class, () -> gpu.allocate(tooMuch));
            assertTrue(e.getMessage().startsWith("out of memory on gpu:0: asked "), e.getMessage());
            var small = gpu.allocate(1000); // the device still works after a failed cudaMalloc
            gpu.free(small);
        }
    }

    @Test
    void aPoolIsReservedUpFront() {
        try (GpuDevice gpu = GpuDevice.open(0, 0.25)) {
            assertTrue(gpu.memoryStats().reservedBytes() >= gpu.properties().totalMemory() / 4 - (2 << 20));
            gpu.free(gpu.allocate(100 << 20));
            assertEquals(1, gpu.memoryStats().deviceMallocs(), "carved from the pool");
        }
    }
}
