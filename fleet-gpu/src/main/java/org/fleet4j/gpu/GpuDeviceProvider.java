package org.fleet4j.gpu;

import org.fleet4j.core.device.Device;
import org.fleet4j.core.device.DeviceProvider;

/** Registers "gpu" with fleet-core's {@code Devices}. Construction loads nothing; CUDA is linked on the first count or open. */
public final class GpuDeviceProvider implements DeviceProvider {
    @Override
    public String kind() {
        return "gpu";
    }

    @Override
    public int deviceCount() {
        return GpuRuntime.deviceCount();
    }

    @Override
    public Device open(int ordinal) {
        return GpuDevice.open(ordinal);
    }
}
