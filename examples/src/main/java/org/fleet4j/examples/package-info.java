/**
 * The built-in programs that {@code fleetrun} runs by name, each a {@code NamedProgram} registered with
 * {@code @AutoService}: {@link Mnist}, {@link Ctr} (a {@code WideDeep} model on Criteo files, collective or against
 * parameter servers) and {@link CtrData} (Criteo-format files drawn from a {@code PlantedCtrModel}), and the benchmarks
 * {@link AllreducePerf} (nccl-tests style bandwidth), {@link GradSyncPerf}, {@link MlpPerf}, {@link GptPerf} and {@link PsPerf}, with
 * what they share ({@code Training}, {@link Rank}, {@code BinaryMetrics}, {@code ZipfLaw}). Programs decide what
 * libraries must not: their {@code main}s print and exit (all but allreduce_perf through {@code ProgramMain}). They use
 * the public API of everything below (fleet-api, fleet-core, strategy, pserver, collective-api, collective-nccl's
 * {@code .group}); fleet-gpu is a run-time dependency only, never imported.
 */
package org.fleet4j.examples;
