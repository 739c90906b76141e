/**
 * {@link ExecutorOverheadBench}: a JMH benchmark of what the CPU {@code Executor} adds per op (a chain of scale ops on
 * a one-element tensor), against the same kernels run over the same frame in a plain loop. It imports fleet-core's
 * {@code exec}, {@code ir}, {@code ops} and {@code tensor} and JMH.
 */
package org.fleet4j.bench.exec;
