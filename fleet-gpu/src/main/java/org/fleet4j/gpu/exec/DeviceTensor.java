package org.fleet4j.gpu.exec;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.gpu.GpuBuffer;

/**
 * The value of one var in GPU memory: a buffer, a dtype and a shape, row-major like a host {@code Tensor}.
 *
 * @param owned whether the executor allocated the buffer for this value and may free it; views into a gradient bucket
 *              are not owned
 */
public record DeviceTensor(GpuBuffer buffer, DType dtype, long[] shape, boolean owned) {
    public long numel() {
        return Shapes.numel(shape);
    }

    public long byteSize() {
        return numel() * dtype.byteSize();
    }

    public int rank() {
        return shape.length;
    }

    public boolean hasShape(long[] s) {
        return java.util.Arrays.equals(shape, s);
    }

    public String describe() {
        return dtype.displayName() + Shapes.str(shape);
    }
}
