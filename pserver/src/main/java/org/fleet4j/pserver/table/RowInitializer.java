package org.fleet4j.pserver.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The values a new row starts with. Each element is a function of (seed, id, column) alone, so a row is the same
 * whichever server creates it, in whatever order, and after a reshard.
 */
public sealed interface RowInitializer {
    /** Element {@code column} of row {@code id}. */
    float value(long id, long column);

    /** Writes row {@code id}'s first {@code width} elements into {@code dst}. */
    default void fill(long id, MemorySegment dst, long width) {
        for (long j = 0; j < width; j++) {
            dst.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, j, value(id, j));
        }
    }

    static RowInitializer constant(float value) {
        return new Constant(value);
    }

    static RowInitializer uniform(float min, float max, long seed) {
        return new Uniform(min, max, seed);
    }

    static RowInitializer normal(float mean, float std, long seed) {
        return new Normal(mean, std, seed);
    }

    record Constant(float value) implements RowInitializer {
        @Override
        public float value(long id, long column) {
            return value;
        }
    }

    record Uniform(float min, float max, long seed) implements RowInitializer {
        @Override
        public float value(long id, long column) {
            return (float) (min + (max - min) * unit(seed, id, column));
        }
    }

    /** Box-Muller from two independent uniforms of the same element. */
    record Normal(float mean, float std, long seed) implements RowInitializer {
        @Override
        public float value(long id, long column) {
            double u1 = 1.0 - unit(seed, id, 2 * column);
            double u2 = unit(seed, id, 2 * column + 1);
            return (float) (mean + std * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2));
        }
    }

    /** A uniform double in [0, 1) from (seed, id, stream): a counter-based generator, no state to share. */
    private static double unit(long seed, long id, long stream) {
        long h = KeyHash.mix(KeyHash.mix(seed * 0xD1B54A32D192ED03L + id) + stream * 0x9E3779B97F4A7C15L);
        return (h >>> 11) * 0x1.0p-53;
    }
}
