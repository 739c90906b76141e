package org.fleet4j.gpu.exec;

import org.fleet4j.core.kernel.DeviceKind;
import org.fleet4j.core.kernel.KernelLibrary;

/** A library of GPU kernels: what every one of this module's kernel libraries says of its device and factories. */
public abstract class GpuKernelLibrary implements KernelLibrary<GpuKernelFactory> {
    @Override
    public final DeviceKind device() {
        return DeviceKind.GPU;
    }

    @Override
    public final Class<GpuKernelFactory> factoryType() {
        return GpuKernelFactory.class;
    }
}
