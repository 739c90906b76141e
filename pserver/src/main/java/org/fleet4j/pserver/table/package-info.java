/**
 * The parameter servers' tables: a {@link TableShard} is server i of S, holding its {@link DenseBlock}s of every dense
 * table ({@link DenseSlicing}, {@link DenseTableConfig}) and its share of every sparse table ({@link SparseTable} in
 * {@code SparseStripe}s; ids placed by {@link KeyHash}; rows made by a {@link RowInitializer}), updated by a
 * {@link ServerOptimizer} with fleet-core's {@code UpdateRules}. No lock: each block and stripe has one owner
 * ({@link ShardOwners}, an {@code OwnerThread} or a transport's network thread) that alone touches it; sync mode
 * averages a step's pushes ({@code StepAggregation}); {@code ShardCheckpoint} saves and reshards, {@link SavedValues}
 * gathers a save. It imports fleet-core's {@code tensor}, {@code ops}, {@code io} and {@code optim} (Adagrad's default)
 * only: no wire, no strategy.
 */
package org.fleet4j.pserver.table;
