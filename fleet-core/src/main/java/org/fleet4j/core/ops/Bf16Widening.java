package org.fleet4j.core.ops;

import java.util.function.Function;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Lets a float32 kernel run an op whose inputs are bfloat16 (AMP's white-listed ops on CPU): the bf16 inputs are
 * widened into float32 scratch tensors, the float32 kernel runs on them, and its outputs are rounded to bf16. The
 * products thus see bf16-rounded operands and accumulate in float32, as tensor-core GEMMs do. Float32 inputs go
 * straight to the wrapped kernel. The scratch tensors live with the kernel, one per op, so steady steps allocate
 * nothing.
 */
final class Bf16Widening implements Kernel {
    private final Kernel f32;
    private final Op op;
    private final String[] inSlots;
    private final int[][] in;
    private final String[] outSlots;
    private final int[][] out;
    private final Object[] frame;

    private Bf16Widening(Kernel f32, Op op) {
        this.f32 = f32;
        this.op = op;
        int next = 0;
        inSlots = op.inputs().keySet().toArray(String[]::new);
        in = new int[inSlots.length][];
        for (int i = 0; i < inSlots.length; i++) {
            in[i] = range(next, op.input(inSlots[i]).size());
            next += in[i].length;
        }
        outSlots = op.outputs().keySet().toArray(String[]::new);
        out = new int[outSlots.length][];
        for (int i = 0; i < outSlots.length; i++) {
            out[i] = range(next, op.output(outSlots[i]).size());
            next += out[i].length;
        }
        frame = new Object[next];
    }

    /** A factory whose kernels accept bf16 inputs as well as the float32 ones {@code f32} takes. */
    static Function<Op, Kernel> of(Function<Op, Kernel> f32) {
        return op -> new Bf16Widening(f32.apply(op), op);
    }

    private static int[] range(int from, int n) {
        int[] r = new int[n];
        for (int i = 0; i < n; i++) {
            r[i] = from + i;
        }
        return r;
    }

    @Override
    public void run(KernelArgs a) {
        if (!anyBf16Input(a)) {
            f32.run(a);
            return;
        }
        for (int i = 0; i < inSlots.length; i++) {
            for (int j = 0; j < in[i].length; j++) {
                frame[in[i][j]] = widened(a, inSlots[i], j, frame[in[i][j]]);
            }
        }
        f32.run(new KernelArgs(op, frame, inSlots, in, outSlots, out));
        for (int i = 0; i < outSlots.length; i++) {
            for (int j = 0; j < out[i].length; j++) {
                if (frame[out[i][j]] instanceof Tensor result) {
                    Casts.convert(result, a.out(outSlots[i], j, DType.BF16, result.shape()));
                }
            }
        }
    }

    private boolean anyBf16Input(KernelArgs a) {
        for (String slot : inSlots) {
            for (int j = 0; j < a.inCount(slot); j++) {
                if (present(a, slot, j) && a.inValue(slot, j) instanceof Tensor t && t.dtype() == DType.BF16) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The input as float32: a bf16 one converted into last step's scratch when it fits; others as they are. */
    private static Object widened(KernelArgs a, String slot, int j, Object scratch) {
        if (!present(a, slot, j)) {
            return null;
        }
        Object v = a.inValue(slot, j);
        if (!(v instanceof Tensor t) || t.dtype() != DType.BF16) {
            return v;
        }
        Tensor f = scratch instanceof Tensor s && s.dtype() == DType.F32 && s.hasShape(t.shape())
                ? s : Tensor.zeros(DType.F32, t.shape());
        Casts.convert(t, f);
        return f;
    }

    private static boolean present(KernelArgs a, String slot, int j) {
        return j == 0 ? a.hasIn(slot) : j < a.inCount(slot);
    }
}
