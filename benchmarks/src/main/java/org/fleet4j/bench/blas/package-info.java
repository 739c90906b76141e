/**
 * JMH benchmarks of fleet-core's BLAS: {@link SgemmBench} (sgemm on the MNIST MLP's layer shapes, {@code MlpShape};
 * OpenBLAS against the pure-Java kernel) and {@link FmaPeakBench} (one core's FMA peak as Java reaches it), with
 * {@link SgemmReport}, which runs both and prints a Markdown table of GFLOPS as a fraction of that peak, and
 * {@link WhichBlas}, which prints the BLAS start-up line. It imports {@code org.fleet4j.core.blas} and JMH only.
 */
package org.fleet4j.bench.blas;
