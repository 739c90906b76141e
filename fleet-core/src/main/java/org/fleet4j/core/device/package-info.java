/**
 * Where tensors live and programs run: a {@link Device} hands out {@link DeviceBuffer}s and copies to and from host
 * memory ({@link CpuDevice} for the host); a {@link ProgramRunner} runs programs on one device with the executor's
 * contract ({@link CpuProgramRunner} wraps the {@code Executor}). Every other kind comes from a {@link DeviceProvider}
 * or {@link ProgramRunnerProvider} found through ServiceLoader only when asked for ({@link Devices},
 * {@link ProgramRunners}), so fleet-core never links against a vendor library and a CPU-only run loads no CUDA class.
 * It imports {@code core.exec}, {@code core.ir}, {@code core.ops} (ExecContext) and {@code core.tensor}.
 */
package org.fleet4j.core.device;
