/**
 * The worker's side of parameter-server training: the kernels of pull_dense, push_dense, pull_sparse, push_sparse and
 * lookup_sparse_table ({@code PsOps}, {@code InferenceOps}, registered by {@link PsOpLibrary}), which take the job's
 * {@link PsCommunicator} from the {@code ExecContext} they are made with, so a server and a worker share a JVM in a
 * test. {@link PsWorker} is the synchronous one, routing blocks and ids ({@link SparseIds}, {@code RoutedIds}) to their
 * servers; {@link AsyncCommunicator} (async, half-async) and {@link GeoCommunicator} (geo, with {@code GeoRows}) wrap
 * it. It imports fleet-core's {@code ir}, {@code ops} and {@code tensor}, and {@code .compile}, {@code .table} and
 * {@code .transport}: never a protocol's package, and nothing process-wide.
 */
package org.fleet4j.pserver.worker;
