/**
 * The PS compile step, a transpiler beside the pass pipeline: {@link PsCompiler} turns the main program after
 * {@code minimize} into a {@link PsPlan}, the worker's programs with pulls and pushes ({@link PsOpTypes}) instead of
 * optimizer ops, and the servers' tables with their optimizers and initializers ({@code ServerOptimizers},
 * {@code ServerInitializers}); {@link PsInference} makes a worker's forward program run without servers from saved
 * values. {@link PsMode} and {@link CommunicatorSettings} read sync, async, half-async or geo and the communicator's
 * knobs from the strategy. It imports fleet-core's {@code ir}, {@code optim} and {@code tensor}, the {@code strategy}
 * root and {@code .schema}, and {@code .table}; the ops' kernels are in {@code .worker}, which it does not import.
 */
package org.fleet4j.pserver.compile;
