package org.fleet4j.gpu.exec;

import org.fleet4j.core.ops.Kernel;
import org.fleet4j.core.ops.KernelArgs;
import org.fleet4j.core.tensor.Tensor;

/**
 * Runs an op's CPU kernel inside a GPU program: its inputs are copied to host tensors, the kernel runs on them, and
 * its outputs are copied back into the device values of their vars (into the same buffers when dtype and shape are
 * unchanged, so views such as a gradient bucket's see the result). Only op types that {@link GpuKernelTable} lists
 * as host fallbacks get here.
 */
final class HostFallback implements GpuOpKernel {
    private final Kernel cpu;
    private final KernelArgs hostArgs;
    private final Object[] hostFrame;
    private final DeviceFrame frame;
    private final int[] inputSlots;
    private final int[] outputSlots;

    HostFallback(Kernel cpu, KernelArgs hostArgs, Object[] hostFrame, DeviceFrame frame, int[] inputSlots,
                 int[] outputSlots) {
        this.cpu = cpu;
        this.hostArgs = hostArgs;
        this.hostFrame = hostFrame;
        this.frame = frame;
        this.inputSlots = inputSlots;
        this.outputSlots = outputSlots;
    }

    @Override
    public void run(GpuOpArgs a) {
        for (int s : inputSlots) {
            DeviceTensor d = frame.get(s);
            if (d == null) {
                hostFrame[s] = null; // the CPU kernel names the missing input
                continue;
            }
            Tensor host = hostFrame[s] instanceof Tensor t && t.dtype() == d.dtype() && t.hasShape(d.shape())
                    ? t : Tensor.zeros(d.dtype(), d.shape());
            if (d.byteSize() > 0) {
                frame.device().copyToHost(d.buffer(), 0, host.segment().asSlice(0, d.byteSize()));
            }
            hostFrame[s] = host;
        }
        cpu.run(hostArgs);
        for (int s : outputSlots) {
            if (!(hostFrame[s] instanceof Tensor t)) {
                throw a.unsupported("its CPU kernel produced " + (hostFrame[s] == null ? "no value"
                        : "a " + hostFrame[s].getClass().getSimpleName()) + " for an output; the GPU path moves dense"
                        + " tensors only");
            }
            DeviceTensor d = frame.output(s, t.dtype(), t.shape());
            if (t.byteSize() > 0) {
                frame.device().copyFromHost(t.segment().asSlice(0, t.byteSize()), d.buffer(), 0);
            }
        }
    }
}
