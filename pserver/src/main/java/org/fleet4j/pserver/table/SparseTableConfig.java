package org.fleet4j.pserver.table;

/**
 * A sparse table: rows of {@code dim} floats keyed by 64-bit ids, updated by {@code optimizer}, created with
 * {@code initializer}; {@code stripes} (a power of two) parts per server, each with one owner (a server rounds the
 * count up to a multiple of its owners, see {@link SparseTable}).
 */
public record SparseTableConfig(String name, int dim, ServerOptimizer optimizer, RowInitializer initializer, int stripes) {
    public static final int DEFAULT_STRIPES = 16;

    public SparseTableConfig {
        if (dim <= 0) {
            throw new IllegalArgumentException("sparse table " + name + ": dimension " + dim + " must be positive");
        }
        if (stripes <= 0 || Integer.bitCount(stripes) != 1) {
            throw new IllegalArgumentException("sparse table " + name + ": stripes " + stripes + " must be a power of two");
        }
    }

    public SparseTableConfig(String name, int dim, ServerOptimizer optimizer, RowInitializer initializer) {
        this(name, dim, optimizer, initializer, DEFAULT_STRIPES);
    }
}
