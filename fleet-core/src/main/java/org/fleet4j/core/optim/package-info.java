/**
 * Optimizers, which turn a loss into training: {@link Optimizer} appends backward, the learning-rate schedule, the
 * decay of regularized parameters and one update op per parameter, with moments and the step counter as persistable
 * vars initialised by the startup program; {@link SGD}, {@link Momentum}, {@link Adagrad}, {@link Adam} and
 * {@link AdamW} choose the update op. The arithmetic is in the ops ({@code core.ops.UpdateRules}), not here. It imports
 * {@code core.autodiff}, {@code core.ir}, {@code core.ops} and {@code core.tensor}; distribution is fleet-api's
 * DistributedOptimizer.
 */
package org.fleet4j.core.optim;
