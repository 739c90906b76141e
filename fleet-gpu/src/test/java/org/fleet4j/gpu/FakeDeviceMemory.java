package org.fleet4j.gpu;

import java.util.HashMap;
import java.util.Map;

/** A device of a fixed capacity that hands out distinct addresses and records what is outstanding. */
final class FakeDeviceMemory implements RawDeviceMemory {
    private final long capacity;
    private final Map<Long, Long> outstanding = new HashMap<>();
    private long nextAddress = 0x7f00_0000_0000L;
    private long inUse;
    int mallocs;
    int frees;

    FakeDeviceMemory(long capacity) {
        this.capacity = capacity;
    }

    @Override
    public long malloc(long bytes) {
        mallocs++;
        if (inUse + bytes > capacity) {
            return 0;
        }
        long address = nextAddress;
        nextAddress += bytes + 4096;
        outstanding.put(address, bytes);
        inUse += bytes;
        return address;
    }

    @Override
    public void free(long address) {
        Long bytes = outstanding.remove(address);
        if (bytes == null) {
            throw new AssertionError("device free of an address it never gave out: 0x" + Long.toHexString(address));
        }
        frees++;
        inUse -= bytes;
    }

    long inUse() {
        return inUse;
    }
}
