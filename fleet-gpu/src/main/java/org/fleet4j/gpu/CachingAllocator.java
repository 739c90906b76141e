package org.fleet4j.gpu;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.tensor.Bytes;

/**
 * Keeps freed device blocks for reuse, because cudaMalloc and cudaFree synchronise the device and are slow. Sizes
 * are rounded to classes (512 B steps below 1 MiB, 2 MiB steps above) and a block is reused only for its own class,
 * which keeps the bookkeeping exact and a steady training loop free of device calls. Optionally a fraction of the
 * device's memory is taken up front as one pool (Paddle's {@code FLAGS_fraction_of_gpu_memory_to_use}) and carved.
 * When the device runs out, the cache is given back and the allocation retried once before failing with the figures.
 */
public final class CachingAllocator implements AutoCloseable {
    static final long SMALL_STEP = 512;
    static final long SMALL_LIMIT = 1 << 20;
    static final long LARGE_STEP = 2 << 20;

    private final String deviceName;
    private final RawDeviceMemory raw;
    private final long deviceTotalBytes;
    private final long poolBase;
    private final long poolBytes;
    private long poolTop;

    private final Map<Long, ArrayDeque<Long>> cache = new HashMap<>();
    private final Map<Long, long[]> live = new HashMap<>(); // address -> {class size, asked}
    private final Map<Long, Long> ownedOutsidePool = new HashMap<>(); // address -> class size
    private long asked;
    private long used;
    private long cached;
    private long peakUsed;
    private long deviceMallocs;
    private long cacheHits;

    /**
     * @param poolFraction share of {@code deviceTotalBytes} taken as one pool now; 0 grows on demand instead
     */
    public CachingAllocator(String deviceName, RawDeviceMemory raw, long deviceTotalBytes, double poolFraction) {
        if (!(poolFraction >= 0 && poolFraction <= 1)) {
            throw new IllegalArgumentException("pool fraction for " + deviceName + " must be in [0, 1], got " + poolFraction);
        }
        this.deviceName = deviceName;
        this.raw = raw;
        this.deviceTotalBytes = deviceTotalBytes;
        long wanted = (long) (deviceTotalBytes * poolFraction) / LARGE_STEP * LARGE_STEP;
        long base = 0;
        if (wanted > 0) {
            base = raw.malloc(wanted);
            deviceMallocs++;
            if (base == 0) {
                throw new DeviceOutOfMemoryException("cannot reserve " + Bytes.format(wanted) + " (fraction " + poolFraction
                        + " of " + Bytes.format(deviceTotalBytes) + ") on " + deviceName
                        + ": another process may hold the memory; lower FLAGS_fraction_of_gpu_memory_to_use", stats());
            }
        }
        this.poolBase = base;
        this.poolBytes = base == 0 ? 0 : wanted;
    }

    /** The size class of a request: what the block really occupies. */
    static long sizeClass(long bytes) {
        if (bytes <= 0) {
            return SMALL_STEP;
        }
        long step = bytes < SMALL_LIMIT ? SMALL_STEP : LARGE_STEP;
        return (bytes + step - 1) / step * step;
    }

    public synchronized long allocate(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("cannot allocate " + bytes + " bytes on " + deviceName);
        }
        long size = sizeClass(bytes);
        long address = takeCached(size);
        if (address == 0 && poolTop + size <= poolBytes) {
            address = poolBase + poolTop;
            poolTop += size;
            cacheHits++;
        }
        if (address == 0) {
            address = deviceMalloc(size);
            if (address == 0) {
                emptyCache();
                address = deviceMalloc(size);
            }
            if (address == 0) {
                throw outOfMemory(bytes, size);
            }
            ownedOutsidePool.put(address, size);
        }
        live.put(address, new long[]{size, bytes});
        asked += bytes;
        used += size;
        peakUsed = Math.max(peakUsed, used);
        return address;
    }

    private long takeCached(long size) {
        ArrayDeque<Long> blocks = cache.get(size);
        if (blocks == null || blocks.isEmpty()) {
            return 0;
        }
        cached -= size;
        cacheHits++;
        return blocks.pop();
    }

    private long deviceMalloc(long size) {
        deviceMallocs++;
        return raw.malloc(size);
    }

    public synchronized void free(long address) {
        long[] block = live.remove(address);
        if (block == null) {
            throw new IllegalArgumentException("free of 0x" + Long.toHexString(address) + " on " + deviceName
                    + ": not a block this allocator handed out, or freed twice");
        }
        used -= block[0];
        asked -= block[1];
        cached += block[0];
        cache.computeIfAbsent(block[0], k -> new ArrayDeque<>()).push(address);
    }

    /** Gives cached blocks back to the device; blocks carved from the pool stay with the pool. */
    public synchronized void emptyCache() {
        for (var e : cache.entrySet()) {
            ArrayDeque<Long> keep = new ArrayDeque<>();
            for (long address : e.getValue()) {
                if (ownedOutsidePool.remove(address) != null) {
                    raw.free(address);
                    cached -= e.getKey();
                } else {
                    keep.add(address);
                }
            }
            e.setValue(keep);
        }
    }

    public synchronized AllocatorStats stats() {
        long outside = 0;
        for (long size : ownedOutsidePool.values()) {
            outside += size;
        }
        return new AllocatorStats(asked, used, live.size(), cached, poolBytes + outside, peakUsed, deviceMallocs, cacheHits);
    }

    private DeviceOutOfMemoryException outOfMemory(long bytes, long size) {
        AllocatorStats s = stats();
        return new DeviceOutOfMemoryException("out of memory on " + deviceName + ": asked " + Bytes.format(bytes)
                + (size != bytes ? " (a " + Bytes.format(size) + " block)" : "")
                + "; in use " + Bytes.format(s.usedBytes()) + " in " + s.liveBlocks() + " blocks (asked "
                + Bytes.format(s.askedBytes()) + "), cached " + Bytes.format(s.cachedBytes())
                + " after giving the cache back and retrying, reserved " + Bytes.format(s.reservedBytes())
                + (poolBytes > 0 ? " (pool " + Bytes.format(poolBytes) + ", " + Bytes.format(poolBytes - poolTop) + " never carved)" : "")
                + " of " + Bytes.format(deviceTotalBytes) + " on the device; lower the batch size or free tensors", s);
    }

    /** Gives every block, held or cached, back to the device. */
    @Override
    public synchronized void close() {
        List<Long> all = new ArrayList<>(ownedOutsidePool.keySet());
        for (long address : all) {
            raw.free(address);
        }
        if (poolBytes > 0) {
            raw.free(poolBase);
        }
        ownedOutsidePool.clear();
        cache.clear();
        live.clear();
        asked = used = cached = 0;
    }
}
