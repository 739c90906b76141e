package org.fleet4j.gpu;

/** The device's own allocator under the cache (cudaMalloc and cudaFree on a GPU): slow, synchronous, never called per step. */
public interface RawDeviceMemory {
    /** The address of a new block of exactly {@code bytes} bytes, or 0 when the device has no room for it. */
    long malloc(long bytes);

    void free(long address);
}
