package org.fleet4j.gpu;

import org.fleet4j.collective.CudaBuffer;
import org.fleet4j.core.device.DeviceBuffer;

/** A block of one GPU's memory, handed out by its {@link CachingAllocator}. */
public record GpuBuffer(GpuDevice device, long address, long byteSize) implements DeviceBuffer {
    /** The same memory from byte {@code offset} on, {@code bytes} long; not separately freed. */
    public GpuBuffer slice(long offset, long bytes) {
        if (offset < 0 || bytes < 0 || offset > byteSize - bytes) {
            throw new IndexOutOfBoundsException("slice [" + offset + ", " + (offset + bytes) + ") of a " + byteSize
                    + "-byte buffer on " + device.name());
        }
        return new GpuBuffer(device, address + offset, bytes);
    }

    /** This memory as the collective API takes it: collectives on it wait for the device's compute stream. */
    public CudaBuffer forCollective() {
        return new CudaBuffer(device.ordinal(), address, byteSize, device.stream().address());
    }
}
