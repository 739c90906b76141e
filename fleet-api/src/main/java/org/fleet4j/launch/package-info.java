/**
 * The launcher, {@code bin/fleetrun} ({@link FleetRun}): it checks the command line and the strategy (exit 2 before any
 * rank starts), resolves a {@link LaunchPlan} for this node ({@link ClusterLayout}, {@link ServerLayout},
 * {@link DeviceSelection}, {@link CpuBinding}, a {@link NamedProgram}), gives every process a {@link RankSpec} with its
 * {@link RankEnvironment}, log and exit policy, and runs them as a {@link Job} that no process outlives; each rank JVM
 * starts in {@link RankMain}, whose {@code LauncherWatch} ends it when the launcher dies. The dry run describes the
 * world, the backend "auto" picks and the compiled program. Only {@code FleetRun.main}, {@code RankMain} and
 * {@code LauncherWatch} exit the JVM. It imports {@code org.fleet4j.cluster}, the collective API and {@code .group},
 * the compiler, strategy, core's {@code device}, pserver's {@code grpcpp} (EndpointMap) and the {@code fleet} root.
 */
package org.fleet4j.launch;
