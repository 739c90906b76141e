package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CachingAllocatorTest {
    private static final long MIB = 1 << 20;

    @Test
    void sizeClasses() {
        assertEquals(512, CachingAllocator.sizeClass(0));
        assertEquals(512, CachingAllocator.sizeClass(1));
        assertEquals(1024, CachingAllocator.sizeClass(513));
        assertEquals(MIB, CachingAllocator.sizeClass(MIB - 1));
        assertEquals(2 * MIB, CachingAllocator.sizeClass(MIB));
        assertEquals(4 * MIB, CachingAllocator.sizeClass(2 * MIB + 1));
    }

    @Test
    void aSteadyLoopReusesBlocksWithoutDeviceCalls() {
        FakeDeviceMemory device = new FakeDeviceMemory(64 * MIB);
        try (CachingAllocator a = new CachingAllocator("gpu:0", device, 64 * MIB, 0)) {
            long first = 0;
            for (int step = 0; step < 5; step++) {
                long x = a.allocate(1000);
                long y = a.allocate(3 * MIB);
                if (step == 0) {
                    first = x;
                }
                assertEquals(first, x, "the cached block of the class comes back");
                a.free(y);
                a.free(x);
            }
            assertEquals(2, device.mallocs);
            AllocatorStats s = a.stats();
            assertEquals(0, s.usedBytes());
            assertEquals(1024 + 4 * MIB, s.cachedBytes());
            assertEquals(1024 + 4 * MIB, s.peakUsedBytes());
            assertEquals(8, s.cacheHits());
        }
        assertEquals(0, device.inUse(), "close gives everything back");
    }

    @Test
    void statsCountAskedUsedAndCached() {
        FakeDeviceMemory device = new FakeDeviceMemory(64 * MIB);
        try (CachingAllocator a = new CachingAllocator("gpu:0", device, 64 * MIB, 0)) {
            long x = a.allocate(100);
            long y = a.allocate(MIB + 1);
            a.allocate(600);
            a.free(y);
            AllocatorStats s = a.stats();
            assertEquals(700, s.askedBytes());
            assertEquals(512 + 1024, s.usedBytes());
            assertEquals(2, s.liveBlocks());
            assertEquals(2 * MIB, s.cachedBytes());
            assertEquals(512 + 1024 + 2 * MIB, s.reservedBytes());
            a.emptyCache();
            assertEquals(0, a.stats().cachedBytes());
            assertEquals(512 + 1024, device.inUse());
            var e = assertThrows(IllegalArgumentException.class, () -> a.free(y));
            assertTrue(e.getMessage().contains("not a block this allocator handed out, or freed twice"), e.getMessage());
            a.free(x);
        }
    }

    @Test
    void runningOutGivesTheCacheBackRetriesThenReportsTheFigures() {
        FakeDeviceMemory device = new FakeDeviceMemory(10 * MIB);
        try (CachingAllocator a = new CachingAllocator("gpu:3", device, 10 * MIB, 0)) {
            long big = a.allocate(6 * MIB);
            a.free(big);
            long other = a.allocate(8 * MIB); // does not fit beside the cached 6 MiB: the cache goes back first
            assertEquals(0, a.stats().cachedBytes());
            assertEquals(8 * MIB, device.inUse());
            var e = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(3 * MIB));
            assertEquals("out of memory on gpu:3: asked 3.00 MiB (a 4.00 MiB block); in use 8.00 MiB in 1 blocks"
                    + " (asked 8.00 MiB), cached 0 B after giving the cache back and retrying, reserved 8.00 MiB"
                    + " of 10.00 MiB on the device; lower the batch size or free tensors", e.getMessage());
            assertEquals(8 * MIB, e.stats().usedBytes());
            a.free(other);
        }
    }

    @Test
    void aPoolIsTakenOnceAndCarved() {
        FakeDeviceMemory device = new FakeDeviceMemory(100 * MIB);
        try (CachingAllocator a = new CachingAllocator("gpu:0", device, 100 * MIB, 0.5)) {
            assertEquals(1, device.mallocs);
            assertEquals(50 * MIB, device.inUse());
            Set<Long> addresses = new HashSet<>();
            for (int i = 0; i < 12; i++) {
                addresses.add(a.allocate(4 * MIB)); // 48 MiB from the pool
            }
            assertEquals(12, addresses.size());
            assertEquals(1, device.mallocs, "carved without device calls");
            long beyond = a.allocate(4 * MIB); // 2 MiB left in the pool: the device is asked
            assertEquals(2, device.mallocs);
            assertTrue(!addresses.contains(beyond));
            a.free(beyond);
            a.emptyCache();
            assertEquals(50 * MIB, device.inUse(), "pool blocks stay with the pool");
            long reused = a.allocate(4 * MIB - 7);
            assertNotEquals(beyond, reused);
        }
        assertEquals(0, device.inUse());
    }

    @Test
    void aPoolThatDoesNotFitSaysSo() {
        FakeDeviceMemory device = new FakeDeviceMemory(10 * MIB);
        var e = assertThrows(DeviceOutOfMemoryException.class, () -> new CachingAllocator("gpu:1", device, 40 * MIB, 0.5));
        assertTrue(e.getMessage().startsWith("cannot reserve 20.00 MiB (fraction 0.5 of 40.00 MiB) on gpu:1"), e.getMessage());
        assertTrue(e.getMessage().contains("FLAGS_fraction_of_gpu_memory_to_use"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new CachingAllocator("gpu:1", device, 40 * MIB, 1.5));
    }

    @Test
    void fractionFlag() {
        assertEquals(0, MemoryFlags.poolFraction(Map.of()));
        assertEquals(0.92, MemoryFlags.poolFraction(Map.of(MemoryFlags.FRACTION, " 0.92")));
        var e = assertThrows(IllegalArgumentException.class, () -> MemoryFlags.poolFraction(Map.of(MemoryFlags.FRACTION, "92%")));
        assertEquals("FLAGS_fraction_of_gpu_memory_to_use='92%': expected a number in [0, 1], e.g. 0.9", e.getMessage());
    }
}
