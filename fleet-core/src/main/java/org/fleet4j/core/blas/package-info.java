/**
 * Single-precision matrix products for the CPU kernels: the {@link Gemm} interface (cblas_sgemm's row-major contract on
 * memory segments), {@link OpenBlasGemm} (OpenBLAS through FFM downcalls, no copies), the pure-Java {@link JavaGemm} on
 * the Vector API (packed panels, a register-blocked micro-kernel, {@code Transpose8}), and {@link Blas}, which picks
 * one for the process ({@code FLEET_BLAS}: OpenBLAS when it loads, else Java). Arguments are checked
 * ({@code GemmArguments}) before any native call touches memory. It imports nothing of Fleet4J; OpenBLAS's thread count
 * is process-wide.
 */
package org.fleet4j.core.blas;
