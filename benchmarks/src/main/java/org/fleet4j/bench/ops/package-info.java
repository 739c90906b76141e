/**
 * Steady-state op benchmarks driven by scripts against a PyTorch peer: {@link ConvBench} (forward + backward of single
 * conv2d layers; scripts/bench/conv_vs_torch.sh) and {@link TransformerOpsBench} (forward + backward of one GPT
 * block, interleaved with its peer over standard input; scripts/bench/gpt_ops_vs_torch.sh). They import fleet-core's
 * {@code autodiff}, {@code blas}, {@code exec}, {@code ir}, {@code layers}, {@code ops} and {@code tensor}.
 */
package org.fleet4j.bench.ops;
