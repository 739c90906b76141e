package org.fleet4j.gpu;

import static org.bytedeco.cuda.global.cudart.cudaErrorMemoryAllocation;
import static org.bytedeco.cuda.global.cudart.cudaFree;
import static org.bytedeco.cuda.global.cudart.cudaGetLastError;
import static org.bytedeco.cuda.global.cudart.cudaMalloc;
import static org.bytedeco.cuda.global.cudart.cudaMemcpyAsync;
import static org.bytedeco.cuda.global.cudart.cudaMemcpyDeviceToDevice;
import static org.bytedeco.cuda.global.cudart.cudaMemcpyDeviceToHost;
import static org.bytedeco.cuda.global.cudart.cudaMemcpyHostToDevice;
import static org.bytedeco.cuda.global.cudart.cudaMemsetAsync;
import static org.bytedeco.cuda.global.cudart.cudaSetDevice;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.bytedeco.javacpp.Pointer;
import org.fleet4j.core.device.Device;
import org.fleet4j.core.device.DeviceBuffer;
import org.fleet4j.core.device.DeviceCopies;

/**
 * One GPU: its memory through a {@link CachingAllocator}, a compute stream on which copies and kernels run in issue
 * order, runtime-compiled kernels and a cuBLAS handle (both made on first use). Every call first makes this device
 * current on the calling thread, so any thread may use it.
 */
public final class GpuDevice implements Device {
    private final DeviceProperties properties;
    private final CachingAllocator allocator;
    private final CudaStream stream;
    private GpuKernels kernels;
    private Cublas cublas;

    private GpuDevice(DeviceProperties properties, double poolFraction) {
        this.properties = properties;
        bind();
        Cuda.check(cudaFree(null), "initialising the CUDA context of " + name());
        this.allocator = new CachingAllocator(name(), new RawDeviceMemory() {
            @Override
            public long malloc(long bytes) {
                Pointer p = new Pointer();
                int status = cudaMalloc(p, bytes);
                if (status == cudaErrorMemoryAllocation) {
                    cudaGetLastError(); // clear the sticky-free error so later calls do not report it
                    return 0;
                }
                Cuda.check(status, "cudaMalloc(" + bytes + ") on " + name());
                return p.address();
            }

            @Override
            public void free(long address) {
                Cuda.check(cudaFree(new DevicePointer(address, 0)), "cudaFree on " + name());
            }
        }, properties.totalMemory(), poolFraction);
        this.stream = new CudaStream(name() + "/compute");
    }

    /** Opens GPU {@code ordinal}, reserving memory as FLAGS_fraction_of_gpu_memory_to_use says. */
    public static GpuDevice open(int ordinal) {
        return open(ordinal, MemoryFlags.poolFraction(System.getenv()));
    }

    public static GpuDevice open(int ordinal, double poolFraction) {
        int count = GpuRuntime.deviceCount();
        if (ordinal < 0 || ordinal >= count) {
            throw new IllegalArgumentException("gpu:" + ordinal + " asked for, but CUDA sees " + count + " GPU"
                    + (count == 1 ? "" : "s") + " (check CUDA_VISIBLE_DEVICES)");
        }
        return new GpuDevice(GpuRuntime.properties(ordinal), poolFraction);
    }

    void bind() {
        Cuda.check(cudaSetDevice(properties.ordinal()), "cudaSetDevice(" + properties.ordinal() + ")");
    }

    public DeviceProperties properties() {
        return properties;
    }

    public CudaStream stream() {
        return stream;
    }

    public AllocatorStats memoryStats() {
        return allocator.stats();
    }

    /** Kernels compiled by NVRTC for this device, cached in memory and under {@link KernelCache#defaultDir}. */
    public synchronized GpuKernels kernels() {
        if (kernels == null) {
            bind();
            kernels = new GpuKernels(this, new KernelCache(new NvrtcCompiler(), KernelCache.defaultDir(System.getenv())));
        }
        return kernels;
    }

    public synchronized Cublas cublas() {
        if (cublas == null) {
            bind();
            cublas = new Cublas(this);
        }
        return cublas;
    }

    @Override
    public String name() {
        return "gpu:" + properties.ordinal();
    }

    @Override
    public String kind() {
        return "gpu";
    }

    @Override
    public int ordinal() {
        return properties.ordinal();
    }

    @Override
    public GpuBuffer allocate(long bytes) {
        bind();
        return new GpuBuffer(this, allocator.allocate(bytes), bytes);
    }

    @Override
    public void free(DeviceBuffer buffer) {
        DeviceCopies.checkRange(this, buffer, 0, 0, "free");
        allocator.free(buffer.address());
    }

    /** Sets every byte of the buffer to zero, in stream order. */
    public void zero(GpuBuffer buffer) {
        bind();
        Cuda.check(cudaMemsetAsync(pointer(buffer), 0, buffer.byteSize(), stream.handle()), "cudaMemsetAsync on " + name());
    }

    /** Copies the first {@code bytes} of {@code src} into {@code dst}, both on this device, in stream order. */
    public void copy(GpuBuffer src, GpuBuffer dst, long bytes) {
        DeviceCopies.checkRange(this, src, 0, bytes, "device copy (source)");
        DeviceCopies.checkRange(this, dst, 0, bytes, "device copy (destination)");
        bind();
        Cuda.check(cudaMemcpyAsync(new DevicePointer(dst.address(), bytes), new DevicePointer(src.address(), bytes), bytes,
                cudaMemcpyDeviceToDevice, stream.handle()), "copy of " + bytes + " bytes within " + name());
    }

    @Override
    public void copyFromHost(MemorySegment src, DeviceBuffer dst, long dstOffset) {
        DeviceCopies.checkCopyFromHost(this, src, dst, dstOffset);
        bind();
        try (Arena staging = Arena.ofConfined()) {
            MemorySegment host = native_(src, staging);
            Cuda.check(cudaMemcpyAsync(new DevicePointer(dst.address() + dstOffset, src.byteSize()),
                    new DevicePointer(host.address(), host.byteSize()), src.byteSize(), cudaMemcpyHostToDevice,
                    stream.handle()), "copy of " + src.byteSize() + " bytes to " + name());
            if (host != src) {
                stream.synchronize(); // the staging copy dies with the arena
            }
        }
    }

    @Override
    public void copyToHost(DeviceBuffer src, long srcOffset, MemorySegment dst) {
        DeviceCopies.checkCopyToHost(this, src, srcOffset, dst);
        bind();
        try (Arena staging = Arena.ofConfined()) {
            MemorySegment host = dst.isNative() ? dst : staging.allocate(dst.byteSize(), 64);
            Cuda.check(cudaMemcpyAsync(new DevicePointer(host.address(), host.byteSize()),
                    new DevicePointer(src.address() + srcOffset, dst.byteSize()), dst.byteSize(), cudaMemcpyDeviceToHost,
                    stream.handle()), "copy of " + dst.byteSize() + " bytes from " + name());
            stream.synchronize(); // the caller reads the bytes next
            if (host != dst) {
                dst.copyFrom(host);
            }
        }
    }

    private static MemorySegment native_(MemorySegment src, Arena staging) {
        if (src.isNative()) {
            return src;
        }
        MemorySegment copy = staging.allocate(src.byteSize(), 64);
        copy.copyFrom(src);
        return copy;
    }

    static DevicePointer pointer(GpuBuffer buffer) {
        return new DevicePointer(buffer.address(), buffer.byteSize());
    }

    @Override
    public void synchronize() {
        bind();
        stream.synchronize();
    }

    @Override
    public synchronized void close() {
        bind();
        stream.synchronize();
        if (cublas != null) {
            cublas.close();
        }
        if (kernels != null) {
            kernels.close();
        }
        allocator.close();
        stream.close();
    }

    @Override
    public String toString() {
        return properties.toString();
    }
}
