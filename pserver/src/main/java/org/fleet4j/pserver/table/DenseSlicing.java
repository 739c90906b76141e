package org.fleet4j.pserver.table;

import java.util.ArrayList;
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

    /** Block {@code block} of {@code param}: elements [offset, offset + numel) of the flattened parameter. */
    public record Block(String param, int block, long offset, long numel, int server) {
        @Override
        public String toString() {
            return param + ".block" + block + " [" + offset + ", " + (offset + numel) + ") -> server " + server;
        }
    }

    /** The blocks of {@code params} over {@code servers} servers. */
    public static List<Block> plan(List<DenseTableConfig> params, int servers, long minBlockSize) {
        if (servers <= 0) {
            throw new IllegalArgumentException("servers " + servers + " must be positive");
        }
        if (minBlockSize <= 0) {
            throw new IllegalArgumentException("min block size " + minBlockSize + " must be positive");
        }
        List<Block> blocks = new ArrayList<>();
        int next = 0;
        for (DenseTableConfig p : params) {
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
