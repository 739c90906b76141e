/**
 * Benchmarks of single ops against PyTorch's: {@code ConvBench} (each conv layer of lenet and a small ResNet, forward
 * and backward, with its GFLOPS against the GEMM peak; scripts/bench/conv_vs_torch.sh) and
 * {@code TransformerOpsBench} (one GPT block; scripts/bench/gpt_ops_vs_torch.sh). They use fleet-core's ops and BLAS
 * through programs, as the executor runs them, and print what the scripts read.
 */
package org.fleet4j.bench.ops;
