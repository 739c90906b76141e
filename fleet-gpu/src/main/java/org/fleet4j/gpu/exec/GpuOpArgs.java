package org.fleet4j.gpu.exec;

import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.gpu.Cublas;
import org.fleet4j.gpu.GpuDevice;
import org.fleet4j.gpu.GpuKernels;
import org.fleet4j.gpu.LaunchShape;

/**
 * A GPU kernel's view of its op's inputs and outputs in the plan's frame of device values. Outputs reuse last step's
 * buffer when dtype and shape are unchanged, so a steady training loop allocates nothing.
 */
public final class GpuOpArgs {
    private final Op op;
    private final DeviceFrame frame;
    private final String[] inSlots;
    private final int[][] in;
    private final String[] outSlots;
    private final int[][] out;

    GpuOpArgs(Op op, DeviceFrame frame, String[] inSlots, int[][] in, String[] outSlots, int[][] out) {
        this.op = op;
        this.frame = frame;
        this.inSlots = inSlots;
        this.in = in;
        this.outSlots = outSlots;
        this.out = out;
    }

    public Op op() {
        return op;
    }

    public GpuDevice device() {
        return frame.device();
    }

    public GpuKernels kernels() {
        return frame.device().kernels();
    }

    public Cublas cublas() {
        return frame.device().cublas();
    }

    /** Launches an elementwise kernel (grid-stride loop) over {@code n} elements. */
    public void launchElements(String kernel, long n, Object... args) {
        kernels().launch(kernel, LaunchShape.elements(n, device().properties().multiprocessors()), args);
    }

    private static int[] find(String[] slots, int[][] idx, String slot) {
        for (int i = 0; i < slots.length; i++) {
            if (slots[i].equals(slot)) {
                return idx[i];
            }
        }
        return new int[0];
    }

    public boolean hasIn(String slot) {
        int[] idx = find(inSlots, in, slot);
        return idx.length > 0 && frame.get(idx[0]) != null;
    }

    public int inCount(String slot) {
        return find(inSlots, in, slot).length;
    }

    public DeviceTensor in(String slot) {
        return in(slot, 0);
    }

    public DeviceTensor in(String slot, int j) {
        int[] idx = find(inSlots, in, slot);
        DeviceTensor t = j < idx.length ? frame.get(idx[j]) : null;
        if (t == null) {
            throw new IllegalStateException("op " + op.type() + ": input " + slot
                    + (j < op.input(slot).size() ? " (" + op.input(slot).get(j) + ")" : "") + " has no value on the GPU");
        }
        return t;
    }

    /** An input that must be float32, as every GPU kernel but the label and counter inputs is. */
    public DeviceTensor inF32(String slot, int j) {
        DeviceTensor t = in(slot, j);
        if (t.dtype() != DType.F32) {
            throw new IllegalArgumentException("op " + op.type() + ": input " + slot + " (" + op.input(slot).get(j)
                    + ") is " + t.describe() + "; its GPU kernel takes float32 only");
        }
        return t;
    }

    public DeviceTensor inF32(String slot) {
        return inF32(slot, 0);
    }

    public boolean hasOut(String slot) {
        return find(outSlots, out, slot).length > 0;
    }

    public int outCount(String slot) {
        return find(outSlots, out, slot).length;
    }

    /** The output of a slot with this dtype and shape, reusing last step's buffer when it fits. */
    public DeviceTensor out(String slot, DType dtype, long... shape) {
        return out(slot, 0, dtype, shape);
    }

    public DeviceTensor out(String slot, int j, DType dtype, long... shape) {
        return frame.output(find(outSlots, out, slot)[j], dtype, shape);
    }

    public DeviceTensor outLike(String slot, DeviceTensor like) {
        return out(slot, like.dtype(), like.shape());
    }

    /** Binds a value (an input updated in place, a view) as an output without allocating. */
    public void setOut(String slot, DeviceTensor value) {
        setOut(slot, 0, value);
    }

    public void setOut(String slot, int j, DeviceTensor value) {
        frame.set(find(outSlots, out, slot)[j], value);
    }

    /** Whether output {@code j} of a slot is the same var as input {@code j} of another (an in-place update). */
    public boolean sameVar(String inSlot, int j, String outSlot) {
        return find(inSlots, in, inSlot)[j] == find(outSlots, out, outSlot)[j];
    }

    /** An error for inputs this op's GPU kernel does not handle, naming the op, the vars and what it takes. */
    public IllegalArgumentException unsupported(String what) {
        return new IllegalArgumentException("op " + op.type() + " on " + device().name() + ": " + what);
    }

    static String shapes(DeviceTensor t) {
        return Shapes.str(t.shape());
    }
}
