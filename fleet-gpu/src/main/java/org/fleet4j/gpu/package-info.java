/**
 * The CUDA device behind fleet-core's device interface: {@link GpuDevice} (one GPU: memory through a
 * {@link CachingAllocator}, a compute {@link CudaStream}, {@link CudaEvent}s, {@link Cublas} for GEMM, and Fleet4J's
 * CUDA C kernels, {@link GpuKernels}, compiled at run time by {@link NvrtcCompiler} and kept in a {@link KernelCache}),
 * {@link GpuRuntime} (is CUDA usable, which GPUs), {@link PinnedHostBuffer}, and {@link GpuDeviceProvider}, which
 * registers "gpu" with {@code Devices}. {@link CudaLoader} links the JavaCPP bindings on first use and names the shared
 * object a failure misses. The only package of the module that imports {@code org.bytedeco}; it imports fleet-core's
 * {@code device}, {@code tensor}, the collective API ({@code CudaBuffer}) and {@code .nccl} (SharedObjects); making a
 * provider loads no CUDA.
 */
package org.fleet4j.gpu;
