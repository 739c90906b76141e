package org.fleet4j.pserver.table;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Which block of which dense parameter lives on which server, as Paddle's {@code slice_variable} and round-robin
 * dispatcher decide: a parameter is cut into at most one block per server, each of at least
 * {@code minBlockSize} elements, rounded up to whole rows; the blocks of all parameters, in order, go to servers
 * 0, 1, ..., S-1, 0, ... in turn.
 */
public final class DenseSlicing {
    /** Paddle's default minimum block size, in elements. */
    public static final long DEFAULT_MIN_BLOCK_SIZE = 8192;

    private DenseSlicing() {
    }

    /** A dense parameter as the plan sees it: a name and a shape (row-major; blocks are cut at whole rows). */
    public record Param(String name, long[] shape) {
        public Param {
            shape = shape.clone();
            for (long d : shape) {
                if (d <= 0) {
                    throw new IllegalArgumentException("dense parameter " + name + ": shape " + Arrays.toString(shape)
                            + " has a dimension that is not positive");
                }
            }
        }

        @Override
        public long[] shape() {
            return shape.clone();
        }

        long numel() {
            long n = 1;
            for (long d : shape) {
                n *= d;
            }
            return n;
        }

        /** Elements per row: the product of all but the first dimension (1 for a vector). */
        long rowWidth() {
            return shape.length < 2 ? 1 : numel() / shape[0];
        }
    }

    /** Block {@code block} of {@code param}: elements [offset, offset + numel) of the flattened parameter. */
    public record Block(String param, int block, long offset, long numel, int server) {
        @Override
        public String toString() {
            return param + ".block" + block + " [" + offset + ", " + (offset + numel) + ") -> server " + server;
        }
    }

    /** The blocks of the tables' parameters over {@code servers} servers. */
    public static List<Block> planTables(List<DenseTableConfig> tables, int servers, long minBlockSize) {
        return plan(tables.stream().map(DenseTableConfig::param).toList(), servers, minBlockSize);
    }

    /** The blocks of {@code params} over {@code servers} servers (what {@code --dry_run} shows). */
    public static List<Block> plan(List<Param> params, int servers, long minBlockSize) {
        if (servers <= 0) {
            throw new IllegalArgumentException("servers " + servers + " must be positive");
        }
        if (minBlockSize <= 0) {
            throw new IllegalArgumentException("min block size " + minBlockSize + " must be positive");
        }
        List<Block> blocks = new ArrayList<>();
        int next = 0;
        for (Param p : params) {
            long numel = p.numel();
            long splits = Math.min(servers, Math.max(1, numel / minBlockSize));
            long blockSize = ceilDiv(numel, splits);
            long width = p.rowWidth();
            if (blockSize % width != 0) {
                blockSize += width - blockSize % width;
            }
            long count = ceilDiv(numel, blockSize);
            for (int b = 0; b < count; b++) {
                long offset = b * blockSize;
                blocks.add(new Block(p.name(), b, offset, Math.min(blockSize, numel - offset), next));
                next = (next + 1) % servers;
            }
        }
        return blocks;
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
