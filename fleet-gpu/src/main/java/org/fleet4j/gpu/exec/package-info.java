/**
 * Running programs on one GPU: {@link GpuExecutor} keeps the CPU {@code Executor}'s contract with persistables living
 * on the device, over a {@code GpuPlan} laid out by fleet-core's {@code PlanLayout} in a frame of
 * {@link DeviceTensor}s. Each op's {@link GpuOpKernel} comes from {@link GpuKernelTable}, the GPU's view of
 * fleet-core's kernel registry, which the {@code *GpuKernels} libraries fill ({@link GpuKernelFactory}s for dense,
 * layer, optimizer, AMP, fused and control ops), or runs the op's CPU kernel on host copies where a host fallback is
 * declared ({@code HostFallback}). Collectives run on each ring's NCCL group ({@link RingGroups}, from the job's
 * {@code ExecContext}; {@code DeviceCollective}). {@link GpuProgramRunnerProvider} registers the runner. It reaches
 * CUDA only through {@code org.fleet4j.gpu}, and imports fleet-core and the collective API.
 */
package org.fleet4j.gpu.exec;
