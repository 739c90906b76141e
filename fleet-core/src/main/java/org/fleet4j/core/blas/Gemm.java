package org.fleet4j.core.blas;

import java.lang.foreign.MemorySegment;

/**
 * Single-precision general matrix product on row-major matrices held in memory segments:
 * {@code C = alpha * op(A) * op(B) + beta * C}, where {@code op(X)} is {@code X} or its transpose —
 * the contract of {@code cblas_sgemm} with {@code CblasRowMajor}.
 *
 * <p>{@code op(A)} is {@code m x k}, {@code op(B)} is {@code k x n} and {@code C} is {@code m x n}. Offsets
 * and leading dimensions count floats: element {@code (i, j)} of a stored matrix {@code X} is at float index
 * {@code xOffsetElems + i * ldx + j}. When {@code beta == 0}, C is not read (NaNs in it do not propagate).
 * Implementations are safe to call from several threads at once.
 */
public interface Gemm {

    void sgemm(boolean transA, boolean transB, int m, int n, int k,
               float alpha, MemorySegment a, long aOffsetElems, int lda,
               MemorySegment b, long bOffsetElems, int ldb,
               float beta, MemorySegment c, long cOffsetElems, int ldc);

    /** A short human-readable name, for example {@code OpenBLAS 0.3.21}. */
    String name();

    /** Sets how many threads one {@link #sgemm} call may use (at least 1). */
    void setThreads(int threads);

    int threads();

    /** The one-line description that programs print at start-up. */
    default String description() {
        return "BLAS: " + name() + " (" + threads() + (threads() == 1 ? " thread)" : " threads)");
    }
}
