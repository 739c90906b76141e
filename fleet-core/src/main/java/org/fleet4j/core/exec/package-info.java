/**
 * Running programs on the CPU. The {@link Executor} binds persistable vars to the {@link Scope}, feeds and fetches, and
 * runs a {@code Plan}: the program laid out once by {@link PlanLayout} (a frame slot per var, each op's slots and the
 * kernel a {@code KernelResolver} gives, on any device), each op's kernel made with the job's {@code ExecContext}.
 * {@link ExecutorOptions} choose the threads: program order, or ops run by readiness ({@code DependencyGraph} over the
 * vars that share memory, {@code StorageClasses}; {@code ParallelRunner}) with the results of program order;
 * {@link ConditionalBlocks} skip the regions whose condition is false. It imports {@code core.ir}, {@code core.ops} and
 * {@code core.tensor}: no device but the CPU, and no collective class (ops named {@code c_*} keep program order).
 */
package org.fleet4j.core.exec;
