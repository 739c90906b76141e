package org.fleet4j.gpu;

/**
 * Grid and block of a launch. Elementwise kernels loop over their elements with a grid stride, so the grid is capped
 * at a few waves of blocks per multiprocessor rather than one thread per element.
 */
public record LaunchShape(int gridX, int gridY, int block, int sharedBytes) {
    public static final int BLOCK = 256;

    /** Enough blocks of 256 threads for {@code n} elements, at most 32 blocks per multiprocessor. */
    public static LaunchShape elements(long n, int multiprocessors) {
        long blocks = Math.max(1, (n + BLOCK - 1) / BLOCK);
        return new LaunchShape((int) Math.min(blocks, 32L * Math.max(1, multiprocessors)), 1, BLOCK, 0);
    }

    /** One block per row (softmax) or per channel (batch norm). */
    public static LaunchShape rows(long rows) {
        if (rows > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(rows + " rows exceed one launch's grid (" + Integer.MAX_VALUE + ")");
        }
        return new LaunchShape((int) Math.max(1, rows), 1, BLOCK, 0);
    }
}
