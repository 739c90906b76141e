package org.fleet4j.pserver.table;

/**
 * A dense parameter kept on the servers, sliced into blocks by {@link DenseSlicing}; element {@code e} (row-major)
 * starts as {@code initializer.value(0, e)}, whatever the slicing.
 */
public record DenseTableConfig(String name, long[] shape, ServerOptimizer optimizer, RowInitializer initializer) {
    public DenseTableConfig {
        shape = new DenseSlicing.Param(name, shape).shape();
    }

    public long numel() {
        return param().numel();
    }

    /** The parameter's name and shape, as {@link DenseSlicing#plan} takes them. */
    public DenseSlicing.Param param() {
        return new DenseSlicing.Param(name, shape);
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }
}
