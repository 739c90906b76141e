package org.fleet4j.gpu.exec;

import org.fleet4j.core.device.Device;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.device.ProgramRunnerProvider;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.gpu.GpuDevice;

/**
 * Registers the {@link GpuExecutor} as the runner of programs on "gpu" devices, its collective ops on NCCL groups over
 * the job's rings (its execution context) unless {@code FLEET_GPU_COLLECTIVES=host} ({@link RingGroups}). Construction loads nothing.
 */
public final class GpuProgramRunnerProvider implements ProgramRunnerProvider {
    @Override
    public String kind() {
        return "gpu";
    }

    @Override
    public ProgramRunner create(Device device, ExecContext context) {
        if (!(device instanceof GpuDevice gpu)) {
            throw new IllegalArgumentException("the GPU executor runs on a GpuDevice, got " + device.name() + " ("
                    + device.getClass().getName() + ")");
        }
        return new GpuExecutor(gpu, RingGroups.fromEnvironment(gpu, context), context);
    }
}
