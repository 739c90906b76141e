package org.fleet4j.gpu.exec;

import java.util.Map;
import java.util.Set;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.kernel.DeviceKernels;
import org.fleet4j.core.kernel.DeviceKind;
import org.fleet4j.core.kernel.KernelRegistry;

/**
 * The GPU's view of the kernel registry: the GPU kernels that this module's {@link GpuKernelFactory} libraries
 * registered against the ops' specs (cuBLAS or NVRTC-compiled CUDA C), and the declared host fallbacks, which copy an
 * op's inputs to the host, run its CPU kernel and copy the outputs back. Every other op is refused when a plan is
 * prepared.
 */
public final class GpuKernelTable {
    private static final DeviceKernels<GpuKernelFactory> KERNELS =
            KernelRegistry.of(DeviceKind.GPU, GpuKernelFactory.class);

    private GpuKernelTable() {
    }

    /** Op types with a GPU kernel. */
    public static Set<String> gpuTypes() {
        return KERNELS.kernelTypes();
    }

    /** Op types that may run through their CPU kernel, with the reason. */
    public static Map<String, String> hostFallbacks() {
        return KERNELS.hostFallbacks();
    }

    /** Whether an op type can run inside a program on the GPU at all. */
    public static boolean covers(String type) {
        return KERNELS.covers(type);
    }

    /**
     * The GPU kernel of an op instance, or null when it takes the host fallback. Throws naming the op when it has
     * neither.
     */
    static GpuOpKernel kernelFor(Op op, int index) {
        GpuKernelFactory f = KERNELS.factory(op);
        if (f != null) {
            return f.create(op);
        }
        if (!KERNELS.placement(op).runs()) {
            throw missing(op, index);
        }
        return null;
    }

    /** An {@link ExecutionException}, as for any program that cannot run: programs report it in one line, exit 2. */
    static ExecutionException missing(Op op, int index) {
        return new ExecutionException("op #" + index + " " + op.type() + " has no GPU kernel (" + KERNELS.placement(op)
                .reason() + "; GPU kernels: " + gpuTypes() + "; host fallbacks: " + hostFallbacks().keySet()
                + "). Run this program on the CPU (FLEET_DEVICE=cpu, or fleetrun without --devices gpu) or register a"
                + " GPU kernel for it (a KernelLibrary of fleet-gpu)");
    }
}
