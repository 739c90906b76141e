/**
 * A process's handle on a distributed job: {@link Fleet}, made by {@code init} from a {@code RoleMaker} and a strategy
 * (the role, the effective strategy, the rings opened through {@code ProcessGroups} and {@code OpenRings} with their
 * registered bucket memory, in the job's {@code ExecContext}), and the sealed {@link DistributedOptimizer} whose
 * {@code minimize} rewrites the program for the job: {@link CollectiveOptimizer} (allreduces, broadcasts, the
 * compiler's pipeline) or {@link ParameterServerOptimizer} (the PS compile step; {@code ParameterServerJob} serves or
 * trains), ending a dry run with {@link DryRunFinished}. Also: {@link RuntimeKnobs}, {@link FleetUtil},
 * {@link InferenceModel}, {@link Timeline}. It imports every module it depends on and {@code .role}, {@code .ops},
 * {@code .onnx}; nothing of a Fleet is process-wide, and a GPU runner is found at run time, never imported.
 */
package org.fleet4j.fleet;
