package org.fleet4j.gpu.exec;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.gpu.GpuBuffer;
import org.fleet4j.gpu.GpuDevice;

/**
 * Device memory one kernel instance keeps for itself between steps (an output the op does not name, a float32
 * product before its bfloat16 rounding): reused while it is large enough, given back when its plan is dropped.
 */
final class Scratch {
    private GpuBuffer buffer;

    /** A tensor of this dtype and shape in the scratch buffer, which grows when needed. */
    DeviceTensor of(GpuOpArgs a, DType dtype, long... shape) {
        long bytes = Shapes.numel(shape) * dtype.byteSize();
        if (buffer == null || buffer.byteSize() < bytes) {
            release(a.device());
            buffer = a.device().allocate(Math.max(bytes, 8));
        }
        return new DeviceTensor(buffer.slice(0, bytes), dtype, shape.clone(), false);
    }

    void release(GpuDevice device) {
        if (buffer != null) {
            device.free(buffer);
            buffer = null;
        }
    }
}
