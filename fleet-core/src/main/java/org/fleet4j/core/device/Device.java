package org.fleet4j.core.device;

import java.lang.foreign.MemorySegment;

/**
 * Where tensors live and kernels run: the CPU, or one GPU. Memory is handed out as {@link DeviceBuffer}s and
 * moved to and from host memory explicitly. Copies may be asynchronous on a GPU; {@link #synchronize()} waits for
 * everything issued so far.
 */
public interface Device extends AutoCloseable {
    /** "cpu", "gpu:0", ...: how users and logs name the device. */
    String name();

    /** "cpu" or "gpu". */
    String kind();

    /** Index among devices of the same kind (0 for the CPU). */
    int ordinal();

    /** A buffer of at least {@code bytes} bytes; its contents are undefined. */
    DeviceBuffer allocate(long bytes);

    /** Returns a buffer of this device; using it afterwards is an error. */
    void free(DeviceBuffer buffer);

    /** Copies all of {@code src} into {@code dst} starting at byte {@code dstOffset}. */
    void copyFromHost(MemorySegment src, DeviceBuffer dst, long dstOffset);

    /** Copies {@code dst.byteSize()} bytes of {@code src} starting at byte {@code srcOffset} into {@code dst}. */
    void copyToHost(DeviceBuffer src, long srcOffset, MemorySegment dst);

    /** Waits until every copy and kernel issued on this device so far has finished. */
    void synchronize();

    /** Releases the device's memory and handles; buffers still allocated become invalid. */
    @Override
    void close();
}
