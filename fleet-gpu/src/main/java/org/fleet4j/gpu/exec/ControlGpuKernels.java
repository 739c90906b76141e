package org.fleet4j.gpu.exec;

import com.google.auto.service.AutoService;
import org.fleet4j.core.exec.ConditionalBlocks;
import org.fleet4j.core.kernel.KernelLibrary;
import org.fleet4j.core.kernel.KernelRegistrar;
import org.fleet4j.core.ops.ActivationOps;
import org.fleet4j.core.ops.ControlOps;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;

/**
 * The GPU's part of the control and collective ops: conditional regions and c_wait need no kernel of their own, and
 * the collectives run on the ring's NCCL group where one is attached (GpuPlan asks for it first), else through the
 * ring's host group.
 */
@AutoService(KernelLibrary.class)
public final class ControlGpuKernels extends GpuKernelLibrary {
    @Override
    public void register(KernelRegistrar<GpuKernelFactory> r) {
        // the executor skips to the matching end when the condition is false (GpuPlan.Step.skipTo); the ops do nothing
        r.kernel(ConditionalBlocks.CONDITIONAL_BEGIN, op -> a -> { });
        r.kernel(ConditionalBlocks.CONDITIONAL_END, op -> a -> { });
        // the c_allreduce_start before it completed its allreduce (on the device group or through the host) already
        r.kernel(CollectiveOpTypes.WAIT, op -> a -> a.setOut("Out", a.in("X")));
        r.hostFallback(CollectiveOpTypes.ALLREDUCE, "when no NCCL group is attached to the op's ring"
                + " (GpuExecutor.attachGroup): the gradient is reduced through the ring's host process group");
        r.hostFallback(CollectiveOpTypes.BROADCAST, "when no NCCL group is attached to the op's ring"
                + " (GpuExecutor.attachGroup): the parameter is broadcast through the ring's host process group");
        r.hostFallback(CollectiveOpTypes.ALLREDUCE_START, "when the ring has no device group: runs as a synchronous"
                + " c_allreduce through the ring's host process group (with a device group it runs on NCCL, to"
                + " completion, like c_allreduce)");
        r.hostFallback(ControlOps.MERGE_STEP, "gradient merge's micro-step counter: one int64 each way per step, whose condition"
                + " the executor reads back anyway");
        r.hostFallback(ActivationOps.SIGN, "L1Decay's sign of a parameter (Regularizer.l1Decay): the parameter each way per step");
    }
}
