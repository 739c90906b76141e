package org.fleet4j.gpu;

import static org.bytedeco.cuda.global.cudart.cudaFreeHost;
import static org.bytedeco.cuda.global.cudart.cudaMallocHost;

import java.lang.foreign.MemorySegment;
import org.bytedeco.javacpp.Pointer;

/**
 * Page-locked host memory for feeds and fetches: the GPU copies it by DMA, asynchronously, at full PCIe speed. The
 * segment is valid until {@link #close()}; tensors may wrap it directly.
 */
public final class PinnedHostBuffer implements AutoCloseable {
    private final Pointer pointer = new Pointer();
    private final MemorySegment segment;

    public PinnedHostBuffer(long bytes) {
        Cuda.check(cudaMallocHost(pointer, Math.max(bytes, 1)), "cudaMallocHost(" + bytes + ")");
        segment = MemorySegment.ofAddress(pointer.address()).reinterpret(bytes);
    }

    public MemorySegment segment() {
        return segment;
    }

    @Override
    public void close() {
        Cuda.check(cudaFreeHost(pointer), "cudaFreeHost");
    }
}
