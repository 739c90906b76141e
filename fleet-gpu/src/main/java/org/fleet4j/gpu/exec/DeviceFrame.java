package org.fleet4j.gpu.exec;

import java.util.Collection;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.gpu.GpuDevice;

/**
 * The device value of every var of one prepared program, by slot. Buffers that an output no longer fits are given
 * back to the device's caching allocator unless another slot (or a persistable held across programs) still uses them.
 */
final class DeviceFrame {
    private final GpuDevice device;
    private final DeviceTensor[] values;
    private final Collection<DeviceTensor> shared;

    /** {@code shared}: values that outlive this frame (persistables), never freed from here. */
    DeviceFrame(GpuDevice device, int slots, Collection<DeviceTensor> shared) {
        this.device = device;
        this.values = new DeviceTensor[slots];
        this.shared = shared;
    }

    GpuDevice device() {
        return device;
    }

    DeviceTensor get(int slot) {
        return values[slot];
    }

    void set(int slot, DeviceTensor value) {
        values[slot] = value;
    }

    int size() {
        return values.length;
    }

    /** The value of an output slot with this dtype and shape: last step's when it fits, else a new buffer. */
    DeviceTensor output(int slot, DType dtype, long[] shape) {
        DeviceTensor old = values[slot];
        if (old != null && old.dtype() == dtype && old.hasShape(shape)) {
            return old;
        }
        values[slot] = null;
        if (old != null) {
            release(old);
        }
        DeviceTensor t = allocate(dtype, shape);
        values[slot] = t;
        return t;
    }

    DeviceTensor allocate(DType dtype, long[] shape) {
        long bytes = org.fleet4j.core.tensor.Shapes.numel(shape) * dtype.byteSize();
        return new DeviceTensor(device.allocate(bytes), dtype, shape.clone(), true);
    }

    /** Frees an owned value that no slot and no shared value refers to any more. */
    void release(DeviceTensor t) {
        if (!t.owned() || inUse(t)) {
            return;
        }
        device.free(t.buffer());
    }

    private boolean inUse(DeviceTensor t) {
        long address = t.buffer().address();
        for (DeviceTensor v : values) {
            if (v != null && v.buffer().address() == address) {
                return true;
            }
        }
        for (DeviceTensor v : shared) {
            if (v.buffer().address() == address) {
                return true;
            }
        }
        return false;
    }

    /** Frees every owned value not shared beyond this frame. */
    void clear() {
        for (int i = 0; i < values.length; i++) {
            DeviceTensor v = values[i];
            values[i] = null;
            if (v != null) {
                release(v);
            }
        }
    }
}
