package org.fleet4j.core.ops;

import java.util.List;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ir.VarKind;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;

/** What shape inference sees of one op: its inputs' declared shapes and dtypes, its attributes, its outputs. */
public final class InferContext {
    private final Op op;
    private final Block block;
    private final int index;

    InferContext(Op op, Block block, int index) {
        this.op = op;
        this.block = block;
        this.index = index;
    }

    public Op op() {
        return op;
    }

    public boolean has(String inSlot) {
        return !op.input(inSlot).isEmpty();
    }

    public int count(String inSlot) {
        return op.input(inSlot).size();
    }

    public Var input(String slot, int j) {
        return block.var(op.input(slot).get(j));
    }

    public long[] shape(String slot) {
        return input(slot, 0).shape();
    }

    public long[] shape(String slot, int j) {
        return input(slot, j).shape();
    }

    public DType dtype(String slot) {
        return input(slot, 0).dtype();
    }

    public boolean hasOutput(String outSlot) {
        return !op.output(outSlot).isEmpty();
    }

    /** Sets the dtype and shape of the first var of an output slot (ignored when the slot is absent). */
    public void set(String outSlot, DType dtype, long... shape) {
        set(outSlot, 0, dtype, shape);
    }

    public void set(String outSlot, int j, DType dtype, long... shape) {
        List<String> names = op.output(outSlot);
        if (j < names.size()) {
            Var v = block.var(names.get(j));
            v.setDtype(dtype).setShape(shape);
        }
    }

    public void setKind(String outSlot, VarKind kind) {
        for (String n : op.output(outSlot)) {
            block.var(n).setKind(kind);
        }
    }

    /** An error naming the op, its position, and every input with its shape. */
    public IrException fail(String problem) {
        StringBuilder sb = new StringBuilder("op #").append(index).append(' ').append(op.type()).append('(');
        boolean first = true;
        for (var e : op.inputs().entrySet()) {
            for (String n : e.getValue()) {
                if (!first) {
                    sb.append(", ");
                }
                first = false;
                Var v = block.findVar(n);
                sb.append(e.getKey()).append('=').append(n);
                if (v != null) {
                    sb.append(' ').append(v.dtype().displayName()).append(Shapes.str(v.shape()));
                }
            }
        }
        return new IrException(sb.append("): ").append(problem).toString());
    }

    public void requireRank(String slot, int... ranks) {
        long[] s = shape(slot);
        for (int r : ranks) {
            if (s.length == r) {
                return;
            }
        }
        throw fail(slot + " must have rank " + java.util.Arrays.toString(ranks) + ", has " + Shapes.str(s));
    }

    public void requireFloat(String slot) {
        if (!dtype(slot).isFloating()) {
            throw fail(slot + " must be a floating-point tensor, is " + dtype(slot).displayName());
        }
    }

    public void requireInteger(String slot) {
        DType d = dtype(slot);
        if (d != DType.I64 && d != DType.I32) {
            throw fail(slot + " must be int64 or int32, is " + d.displayName());
        }
    }
}
