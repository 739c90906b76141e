package org.fleet4j.pserver.table;

import java.util.Arrays;

/**
 * A dense parameter kept on the servers, sliced into blocks by {@link DenseSlicing}; element {@code e} (row-major)
 * starts as {@code initializer.value(0, e)}, whatever the slicing.
 */
public record DenseTableConfig(String name, long[] shape, ServerOptimizer optimizer, RowInitializer initializer) {
    public DenseTableConfig {
        shape = shape.clone();
        for (long d : shape) {
            if (d <= 0) {
                throw new IllegalArgumentException("dense table " + name + ": shape " + Arrays.toString(shape)
                        + " has a dimension that is not positive");
            }
        }
    }

    public long numel() {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    /** Elements per row (the product of all but the first dimension): blocks are cut at row boundaries. */
    public long rowWidth() {
        return shape.length < 2 ? 1 : numel() / shape[0];
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }
}
