package org.fleet4j.core.device;

import java.lang.foreign.MemorySegment;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.core.tensor.Tensor;

/** The host: buffers are off-heap segments aligned like tensors, copies are memory copies, nothing is asynchronous. */
public final class CpuDevice implements Device {
    static final CpuDevice INSTANCE = new CpuDevice();

    private CpuDevice() {
    }

    /** A CPU buffer: the segment is the memory itself. */
    public record HostBuffer(MemorySegment segment) implements DeviceBuffer {
        @Override
        public Device device() {
            return INSTANCE;
        }

        @Override
        public long address() {
            return segment.address();
        }

        @Override
        public long byteSize() {
            return segment.byteSize();
        }
    }

    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public String kind() {
        return "cpu";
    }

    @Override
    public int ordinal() {
        return 0;
    }

    @Override
    public HostBuffer allocate(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("cannot allocate " + bytes + " bytes on cpu");
        }
        return new HostBuffer(OffHeapMemory.allocate(bytes, Tensor.ALIGNMENT, () -> "a cpu buffer"));
    }

    /** The garbage collector frees CPU buffers; this only checks that the buffer is ours. */
    @Override
    public void free(DeviceBuffer buffer) {
        DeviceCopies.checkRange(this, buffer, 0, 0, "free");
    }

    @Override
    public void copyFromHost(MemorySegment src, DeviceBuffer dst, long dstOffset) {
        DeviceCopies.checkCopyFromHost(this, src, dst, dstOffset);
        MemorySegment.copy(src, 0, ((HostBuffer) dst).segment(), dstOffset, src.byteSize());
    }

    @Override
    public void copyToHost(DeviceBuffer src, long srcOffset, MemorySegment dst) {
        DeviceCopies.checkCopyToHost(this, src, srcOffset, dst);
        MemorySegment.copy(((HostBuffer) src).segment(), srcOffset, dst, 0, dst.byteSize());
    }

    @Override
    public void synchronize() {
    }

    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return name();
    }
}
