package org.fleet4j.core.device;

/** A provider registered only through a test class loader: two "GPUs" that are really the CPU under another name. */
public final class FakeGpuProvider implements DeviceProvider {
    static int opened = -1;

    @Override
    public String kind() {
        return "gpu";
    }

    @Override
    public int deviceCount() {
        return 2;
    }

    @Override
    public Device open(int ordinal) {
        opened = ordinal;
        return Devices.cpu();
    }
}
