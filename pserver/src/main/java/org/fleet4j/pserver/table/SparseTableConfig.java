package org.fleet4j.pserver.table;

import java.util.Objects;

/**
 * A sparse table: rows of {@code dim} floats keyed by 64-bit ids, updated by {@code optimizer}, created with
 * {@code initializer}; {@code stripes} (a power of two) parts per server, each with one owner (a server rounds the
 * count up to a multiple of its owners, see {@link SparseTable}); which ids get a row ({@code admission}) and which
 * rows go ({@code eviction}).
 */
public record SparseTableConfig(String name, int dim, ServerOptimizer optimizer, RowInitializer initializer, int stripes,
                                RowAdmission admission, RowEviction eviction) {
    public static final int DEFAULT_STRIPES = 16;

    public SparseTableConfig {
        if (dim <= 0) {
            throw new IllegalArgumentException("sparse table " + name + ": dimension " + dim + " must be positive");
        }
        if (stripes <= 0 || Integer.bitCount(stripes) != 1) {
            throw new IllegalArgumentException("sparse table " + name + ": stripes " + stripes + " must be a power of two");
        }
        Objects.requireNonNull(admission, "admission");
        Objects.requireNonNull(eviction, "eviction");
    }

    public SparseTableConfig(String name, int dim, ServerOptimizer optimizer, RowInitializer initializer, int stripes) {
        this(name, dim, optimizer, initializer, stripes, new RowAdmission.Everyone(), RowEviction.none());
    }

    public SparseTableConfig(String name, int dim, ServerOptimizer optimizer, RowInitializer initializer) {
        this(name, dim, optimizer, initializer, DEFAULT_STRIPES);
    }

    /** The same table with these admission and eviction rules. */
    public SparseTableConfig withRows(RowAdmission rowAdmission, RowEviction rowEviction) {
        return new SparseTableConfig(name, dim, optimizer, initializer, stripes, rowAdmission, rowEviction);
    }

    /** The same table updated by {@code other} (geo mode's servers add deltas). */
    public SparseTableConfig withOptimizer(ServerOptimizer other) {
        return new SparseTableConfig(name, dim, other, initializer, stripes, admission, eviction);
    }
}
