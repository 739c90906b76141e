/**
 * Steady-state benchmarks of single ops beside their PyTorch peers, one thread each, on fleet-core's executor:
 * {@link ConvBench} (each conv layer of lenet and a small ResNet, forward and backward, with its GFLOPS against the
 * GEMM peak; scripts/bench/conv_vs_torch.sh) and {@link TransformerOpsBench} (one GPT block, driven line by line from
 * scripts/bench/gpt_ops_vs_torch.sh, which interleaves it with PyTorch).
 */
package org.fleet4j.bench.ops;
