/**
 * The collective ops (Paddle's {@code c_allreduce}, {@code c_broadcast}, {@code c_allreduce_start}/{@code c_wait}, and
 * the stages of hierarchical allreduce) and their CPU kernels ({@code CollectiveOps}, {@code HierarchicalOps},
 * {@code SparseAllreduce} for sparse gradients), registered by {@link CollectiveOpLibrary}. {@link CollectiveOpTypes}
 * spells their type and attribute names once, for the passes that insert them, these kernels and the GPU kernels. A
 * kernel takes its ring's {@code ProcessGroup} from the job's {@code ExecContext} once, when it is made. It imports
 * {@code core.ir}, {@code core.ops}, {@code core.tensor}, {@code org.fleet4j.collective} and its {@code .reduce}; it
 * names no backend and no pass.
 */
package org.fleet4j.core.ops.collective;
