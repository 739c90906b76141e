package org.fleet4j.gpu.exec;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import org.fleet4j.core.exec.ConditionalBlocks;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.ops.collective.CollectiveOpTypes;

/**
 * Which op types run on the GPU and how: a GPU kernel (cuBLAS or an NVRTC-compiled CUDA C kernel), or a host
 * fallback that copies the op's inputs to the host, runs its CPU kernel and copies the outputs back. Host fallbacks
 * are listed here with the reason, each for ops that run once (initialisers), outside the training step (metrics) or
 * cost one scalar copy; every other op type without a GPU kernel is refused when a plan is prepared.
 */
public final class GpuKernelTable {
    /** A factory may return null for an op instance whose attributes its kernel does not handle: it then falls back. */
    private static final Map<String, Function<Op, GpuOpKernel>> KERNELS = new TreeMap<>();
    private static final Map<String, String> HOST_FALLBACKS = new TreeMap<>();

    static {
        DenseGpuKernels.register();
        OptimizerGpuKernels.register();
        FusedGpuKernels.register();
        AmpGpuKernels.register();
        LayerGpuKernels.register();
        // the executor skips to the matching end when the condition is false (GpuPlan.Step.skipTo); the ops do nothing
        gpu(ConditionalBlocks.CONDITIONAL_BEGIN, op -> a -> { });
        gpu(ConditionalBlocks.CONDITIONAL_END, op -> a -> { });
        // the c_allreduce_start before it completed its allreduce (on the device group or through the host) already
        gpu(CollectiveOpTypes.WAIT, op -> a -> a.setOut("Out", a.in("X")));
        host("uniform_random", "an initialiser: runs once in the startup program; its random stream matches the CPU's");
        host("gaussian_random", "an initialiser: runs once in the startup program; its random stream matches the CPU's");
        host("assign_value", "an initialiser with given values (Initializer.values): runs once in the startup program");
        host("fill_constant", "for dtypes other than float32 (float32 has a GPU kernel)");
        host("lr_schedule", "for schedules other than a constant rate without warm-up (those have a GPU kernel):"
                + " one scalar each way per step");
        host("momentum", "with weight_decay != 0 (without it there is a GPU kernel)");
        host("fused_momentum", "with weight_decay != 0 (without it there is a GPU kernel)");
        host(CollectiveOpTypes.ALLREDUCE, "when no NCCL group is attached to the op's ring (GpuExecutor.attachGroup): the gradient is"
                + " reduced through the ring's host process group");
        host(CollectiveOpTypes.BROADCAST, "when no NCCL group is attached to the op's ring (GpuExecutor.attachGroup): the parameter"
                + " is broadcast through the ring's host process group");
        host(CollectiveOpTypes.ALLREDUCE_START, "when the ring has no device group: runs as a synchronous c_allreduce through the"
                + " ring's host process group (with a device group it runs on NCCL, to completion, like c_allreduce)");
        host("merge_step", "gradient merge's micro-step counter: one int64 each way per step, whose condition the"
                + " executor reads back anyway");
        host("sign", "L1Decay's sign of a parameter (Regularizer.l1Decay): the parameter each way per step");
        host("gelu", "with approximate (the tanh form; the exact form has a GPU kernel)");
        host("gelu_grad", "with approximate (the tanh form; the exact form has a GPU kernel)");
        host("softmax_with_cross_entropy", "with label_smoothing != 0 (without it there is a GPU kernel)");
        host("softmax_with_cross_entropy_grad", "with label_smoothing != 0 (without it there is a GPU kernel)");
    }

    private GpuKernelTable() {
    }

    static void gpu(String type, Function<Op, GpuOpKernel> factory) {
        KERNELS.put(type, factory);
    }

    private static void host(String type, String why) {
        HOST_FALLBACKS.put(type, why);
    }

    /** Op types with a GPU kernel. */
    public static Set<String> gpuTypes() {
        return Collections.unmodifiableSet(KERNELS.keySet());
    }

    /** Op types that may run through their CPU kernel, with the reason. */
    public static Map<String, String> hostFallbacks() {
        return Collections.unmodifiableMap(HOST_FALLBACKS);
    }

    /** Whether an op type can run inside a program on the GPU at all. */
    public static boolean covers(String type) {
        return KERNELS.containsKey(type) || HOST_FALLBACKS.containsKey(type);
    }

    /**
     * The GPU kernel of an op instance, or null when it takes the host fallback. Throws naming the op when it has
     * neither.
     */
    static GpuOpKernel kernelFor(Op op, int index) {
        Function<Op, GpuOpKernel> f = KERNELS.get(op.type());
        GpuOpKernel k = f == null ? null : f.apply(op);
        if (k != null) {
            return k;
        }
        if (!HOST_FALLBACKS.containsKey(op.type())) {
            throw missing(op, index);
        }
        return null;
    }

    /** An {@link ExecutionException}, as for any program that cannot run: programs report it in one line, exit 2. */
    static ExecutionException missing(Op op, int index) {
        return new ExecutionException("op #" + index + " " + op.type() + " has no GPU kernel (GPU kernels: "
                + KERNELS.keySet() + "; host fallbacks: " + HOST_FALLBACKS.keySet() + "). Run this program on the CPU"
                + " (FLEET_DEVICE=cpu, or fleetrun without --devices gpu) or add a kernel to GpuKernelTable");
    }
}
