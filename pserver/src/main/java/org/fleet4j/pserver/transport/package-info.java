/**
 * The seam between workers and servers, whatever the wire: a {@link PsTransport} per protocol ({@code grpc},
 * {@code grpc++}, {@code star_server}, {@code star_server_lite}), found through ServiceLoader by the strategy's
 * {@code protocol}, starts a {@link PsServer} over a {@code TableShard} and opens a {@link PsConnection} (one call per
 * shard method, {@link PsBatch} for a fused step; {@link ConnectOnFirstCall} without a launch barrier), with the
 * {@link PsOptions} both ends agree on. The job-token check ({@link CallProof}, {@link Sessions},
 * {@link ReplayWindow}), {@link PsException} and {@link ThreadJoin} are shared by every protocol. It imports
 * {@code .table} and {@code org.fleet4j.cluster} (JobToken) only: it names no protocol's class.
 */
package org.fleet4j.pserver.transport;
