package org.fleet4j.core.kernel;

/**
 * The kernels a module adds for one kind of device, registered against the ops' own specs and found through
 * {@link java.util.ServiceLoader} (a library registers itself with {@code @AutoService(KernelLibrary.class)}). Every
 * library of a device makes its kernels with the same factory type {@code F} (fleet-gpu's {@code GpuKernelFactory}).
 * Registering must load nothing heavy: the CPU-only dry run of a GPU world lists where each op would run.
 */
public interface KernelLibrary<F> {
    DeviceKind device();

    /** The type of this device's kernel factories. */
    Class<F> factoryType();

    void register(KernelRegistrar<F> registrar);
}
