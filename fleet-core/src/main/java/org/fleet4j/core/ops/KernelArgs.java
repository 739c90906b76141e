package org.fleet4j.core.ops;

import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.OffHeapMemoryException;
import org.fleet4j.core.tensor.Tensor;

/**
 * A kernel's view of the values of its op's inputs and outputs in the executor's frame. Output tensors are
 * reused from the previous step when their dtype and shape are unchanged, so a steady training loop allocates
 * nothing.
 */
public final class KernelArgs {
    private final Op op;
    private final Object[] frame;
    private final String[] inSlots;
    private final int[][] in;
    private final String[] outSlots;
    private final int[][] out;
    private final DroppedBuffers dropped;

    public KernelArgs(Op op, Object[] frame, String[] inSlots, int[][] in, String[] outSlots, int[][] out) {
        this(op, frame, inSlots, in, outSlots, out, null);
    }

    /** {@code dropped}: where outputs are taken from before new memory is allocated, or null. */
    public KernelArgs(Op op, Object[] frame, String[] inSlots, int[][] in, String[] outSlots, int[][] out,
                      DroppedBuffers dropped) {
        this.dropped = dropped;
        this.op = op;
        this.frame = frame;
        this.inSlots = interned(inSlots);
        this.in = in;
        this.outSlots = interned(outSlots);
        this.out = out;
    }

    public Op op() {
        return op;
    }

    /** Kernels name slots with literals, which are interned: then the lookup below matches on identity. */
    private static String[] interned(String[] slots) {
        String[] copy = new String[slots.length];
        for (int i = 0; i < slots.length; i++) {
            copy[i] = slots[i].intern();
        }
        return copy;
    }

    private static int find(String[] slots, String slot) {
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] == slot || slots[i].equals(slot)) {
                return i;
            }
        }
        return -1;
    }

    private int[] inIdx(String slot) {
        int i = find(inSlots, slot);
        return i < 0 ? EMPTY : in[i];
    }

    private int[] outIdx(String slot) {
        int i = find(outSlots, slot);
        return i < 0 ? EMPTY : out[i];
    }

    private static final int[] EMPTY = new int[0];

    public boolean hasIn(String slot) {
        int[] idx = inIdx(slot);
        return idx.length > 0 && frame[idx[0]] != null;
    }

    public int inCount(String slot) {
        return inIdx(slot).length;
    }

    public Tensor in(String slot) {
        return in(slot, 0);
    }

    public Tensor in(String slot, int j) {
        Object v = inValue(slot, j);
        if (v instanceof Tensor t) {
            return t;
        }
        throw new IrException("op " + op.type() + ": input " + slot + " (" + op.input(slot).get(j)
                + ") is a sparse gradient where a dense tensor is needed");
    }

    /** A dense tensor or a {@link SelectedRows}. */
    public Object inValue(String slot, int j) {
        int[] idx = inIdx(slot);
        if (j >= idx.length || frame[idx[j]] == null) {
            throw new IrException("op " + op.type() + ": input " + slot
                    + (j < op.input(slot).size() ? " (" + op.input(slot).get(j) + ")" : "") + " has no value");
        }
        return frame[idx[j]];
    }

    public boolean hasOut(String slot) {
        return outIdx(slot).length > 0;
    }

    public int outCount(String slot) {
        return outIdx(slot).length;
    }

    /** The output tensor of a slot with this dtype and shape, reusing last step's buffer when it fits. */
    public Tensor out(String slot, DType dtype, long... shape) {
        return out(slot, 0, dtype, shape);
    }

    public Tensor out(String slot, int j, DType dtype, long... shape) {
        int idx = outIdx(slot)[j];
        if (frame[idx] instanceof Tensor t && t.dtype() == dtype && t.hasShape(shape)) {
            return t;
        }
        Tensor t = dropped == null ? null : dropped.take(dtype, shape);
        if (t == null) {
            try {
                t = Tensor.zeros(dtype, shape);
            } catch (OffHeapMemoryException e) {
                throw e.in("output '" + op.output(slot).get(j) + "'");
            }
        }
        frame[idx] = t;
        return t;
    }

    /** An output with the dtype and shape of another tensor. */
    public Tensor outLike(String slot, Tensor like) {
        return out(slot, like.dtype(), like.shape());
    }

    /** Stores a value (a view, or {@link SelectedRows}) as an output without allocating. */
    public void setOut(String slot, Object value) {
        setOut(slot, 0, value);
    }

    /** Stores a value as the j-th var of an output slot (compiler ops bind views into fused buffers this way). */
    public void setOut(String slot, int j, Object value) {
        frame[outIdx(slot)[j]] = value;
    }

    /** The current value of the j-th var of an output slot, or null when it has none yet. */
    public Object outValue(String slot, int j) {
        return frame[outIdx(slot)[j]];
    }
}
