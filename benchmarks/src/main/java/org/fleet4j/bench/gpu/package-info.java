/**
 * {@link GpuBench}: the figures of the GPU check, cuBLAS GEMM throughput (float32, and bfloat16 on tensor cores) and
 * NCCL allreduce on one rank, timed with CUDA events; a table on stdout and one JSON object per figure in the
 * {@code --out} file. It imports {@code org.fleet4j.gpu}, the collective API, {@code .group}, {@code .nccl} and
 * {@code org.fleet4j.cluster}, and needs a GPU and the CUDA bindings to run.
 */
package org.fleet4j.bench.gpu;
