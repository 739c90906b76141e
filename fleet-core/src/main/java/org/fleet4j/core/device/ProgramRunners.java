package org.fleet4j.core.device;

import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.ops.ExecContext;

/** Finds the runner of programs for a device: the {@link Executor} for the CPU, a {@link ProgramRunnerProvider} otherwise. */
public final class ProgramRunners {
    private ProgramRunners() {
    }

    /** The runner on the device the launcher assigned to this process ({@code FLEET_DEVICE}), the CPU when none. */
    public static ProgramRunner forThisProcess() {
        return forDevice(Devices.forThisProcess());
    }

    /** As {@link #forThisProcess()}; on the CPU, an executor with these options (other devices run as they do). */
    public static ProgramRunner forThisProcess(ExecutorOptions cpuOptions) {
        return forThisProcess(cpuOptions, ExecContext.none());
    }

    /**
     * As {@link #forThisProcess(ExecutorOptions)}, the kernels made with the job's {@code context} (its rings for
     * collective ops), on whichever device.
     */
    public static ProgramRunner forThisProcess(ExecutorOptions cpuOptions, ExecContext context) {
        Device device = Devices.forThisProcess();
        return device.kind().equals("cpu") ? new CpuProgramRunner(new Executor(cpuOptions, context))
                : forDevice(device, context, ProgramRunners.class.getClassLoader());
    }

    public static ProgramRunner forDevice(Device device) {
        return forDevice(device, ExecContext.none(), ProgramRunners.class.getClassLoader());
    }

    /** As {@link #forDevice(Device)}, the kernels made with {@code context}, providers found through {@code loader}. */
    public static ProgramRunner forDevice(Device device, ExecContext context, ClassLoader loader) {
        if (device.kind().equals("cpu")) {
            return new CpuProgramRunner(new Executor(ExecutorOptions.defaults(), context));
        }
        try {
            for (ProgramRunnerProvider p : ServiceLoader.load(ProgramRunnerProvider.class, loader)) {
                if (p.kind().equals(device.kind())) {
                    return p.create(device, context);
                }
            }
        } catch (ServiceConfigurationError e) {
            throw new DeviceUnavailableException("a program runner provider on the classpath could not be loaded: "
                    + e.getMessage() + "; check that the fleet4j-gpu jar matches this fleet4j-core", e);
        }
        throw new DeviceUnavailableException("no program runner for " + device.name() + ": the classpath has a device "
                + "provider for '" + device.kind() + "' but no ProgramRunnerProvider of that kind; see docs/GPU.md");
    }
}
