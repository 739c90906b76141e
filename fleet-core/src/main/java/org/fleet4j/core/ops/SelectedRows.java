package org.fleet4j.core.ops;

import org.fleet4j.core.tensor.Tensor;

/**
 * A sparse gradient: {@code values[i]} is the gradient of row {@code rows[i]} of a [height, width] parameter.
 * Rows may repeat; consumers add duplicates. An embedding with is_sparse produces one.
 */
public record SelectedRows(Tensor rows, Tensor values, long height) {
    public long width() {
        return values.dim(1);
    }

    /** The dense [height, width] tensor this stands for (duplicates summed). */
    public Tensor toDense() {
        Tensor dense = Tensor.zeros(values.dtype(), height, width());
        long w = width();
        for (long i = 0; i < rows.numel(); i++) {
            long r = rows.getLong(i);
            for (long j = 0; j < w; j++) {
                dense.setFloat(r * w + j, dense.getFloat(r * w + j) + values.getFloat(i * w + j));
            }
        }
        return dense;
    }
}
