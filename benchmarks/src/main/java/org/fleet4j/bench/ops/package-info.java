/**
 * Steady-state benchmarks of single ops beside their PyTorch peers: {@link ConvBench} (forward and backward of conv2d
 * layers) and {@link TransformerOpsBench} (one GPT block, driven line by line from a script that interleaves it with
 * PyTorch). One thread each; they run programs on fleet-core's executor.
 */
package org.fleet4j.bench.ops;
