/**
 * {@link Reductions}: element-wise combination of one memory region into another for each {@code DataType} and
 * {@code ReduceOp} (one Vector API loop per pair; scalar code for heap segments), AVG's division, and bfloat16
 * conversion, so that the shm, TCP and hierarchical backends and fleet-core's sparse allreduce combine values alike. It
 * imports only {@code org.fleet4j.collective} and {@code jdk.incubator.vector}, and holds no state.
 */
package org.fleet4j.collective.reduce;
