/**
 * Benchmarks of the parameter servers without a job around them, each a {@code main} that prints its figures:
 * {@link SparseTableMemoryBench} (off-heap bytes of a large sparse table), {@link SparseTableStepBench} (a table's
 * share of a {@code ps_perf} step, on the calling thread as owner), {@link TablePushThroughputBench} (pushes on hot
 * keys from many threads) and {@link TransportThroughputBench} (the transports side by side on loopback in one JVM). It
 * imports pserver's {@code table}, {@code transport} and {@code grpcpp}, {@code org.fleet4j.cluster} and fleet-core's
 * {@code tensor}.
 */
package org.fleet4j.bench.pserver;
