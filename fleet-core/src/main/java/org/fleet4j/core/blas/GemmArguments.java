package org.fleet4j.core.blas;

import java.lang.foreign.MemorySegment;

/**
 * Validates sgemm arguments before any memory is touched: a wrong leading dimension passed to a native BLAS
 * would read or write outside the segment and crash the JVM instead of raising an exception.
 */
final class GemmArguments {

    private GemmArguments() {
    }

    static void check(boolean transA, boolean transB, int m, int n, int k,
                      MemorySegment a, long aOffset, int lda,
                      MemorySegment b, long bOffset, int ldb,
                      MemorySegment c, long cOffset, int ldc) {
        if (m < 0 || n < 0 || k < 0) {
            throw new IllegalArgumentException("sgemm dimensions must be >= 0, got m=" + m + " n=" + n + " k=" + k);
        }
        // Stored shapes: A is m x k (k x m when transposed), B is k x n (n x k when transposed), C is m x n.
        matrix("A", transA ? k : m, transA ? m : k, a, aOffset, lda, "lda", transA ? "A is stored k x m (transA)" : "A is stored m x k");
        matrix("B", transB ? n : k, transB ? k : n, b, bOffset, ldb, "ldb", transB ? "B is stored n x k (transB)" : "B is stored k x n");
        matrix("C", m, n, c, cOffset, ldc, "ldc", "C is m x n");
    }

    private static void matrix(String name, int rows, int cols, MemorySegment seg, long offset, int ld,
                               String ldName, String layout) {
        if (seg == null) {
            throw new IllegalArgumentException("sgemm matrix " + name + " is null");
        }
        if (ld < Math.max(1, cols)) {
            throw new IllegalArgumentException("sgemm " + ldName + "=" + ld + " is smaller than the row width " + cols
                    + " (" + layout + ", rows " + rows + " x cols " + cols + ")");
        }
        if (offset < 0) {
            throw new IllegalArgumentException("sgemm offset of " + name + " is negative: " + offset);
        }
        if (rows == 0 || cols == 0) {
            return;
        }
        long lastElem = offset + (long) (rows - 1) * ld + cols;
        long available = seg.byteSize() / Float.BYTES;
        if (lastElem > available) {
            throw new IllegalArgumentException("sgemm matrix " + name + " (" + layout + ", " + rows + " x " + cols
                    + ", offset " + offset + ", " + ldName + " " + ld + ") needs " + lastElem
                    + " floats but its segment holds " + available);
        }
    }
}
