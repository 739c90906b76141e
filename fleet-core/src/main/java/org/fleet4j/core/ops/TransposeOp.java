package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.Arrays;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * transpose (Paddle's transpose2 without its XShape): Out's dim d is X's dim axis[d], for any permutation axis; the
 * gradient is Out's gradient transposed back.
 */
@AutoService(OpLibrary.class)
public final class TransposeOp implements OpLibrary {
    public static final String TRANSPOSE = "transpose";

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(TRANSPOSE)
                .in("X").out("Out")
                .attr("axis", AttrType.INTS, null)
                .shape(ctx -> {
                    long[] x = ctx.shape("X");
                    int[] perm = ctx.op().attr("axis");
                    if (!isPermutation(perm, x.length)) {
                        throw ctx.fail("axis " + Arrays.toString(perm) + " is not a permutation of the " + x.length
                                + " dims of X: give each of 0.." + (x.length - 1) + " once");
                    }
                    ctx.set("Out", ctx.dtype("X"), permuted(x, perm));
                })
                .kernel(op -> {
                    int[] perm = op.attr("axis");
                    return a -> {
                        Tensor x = a.in("X");
                        Tensor out = a.out("Out", x.dtype(), permuted(x.shape(), perm));
                        move(x, out, perm);
                    };
                })
                .gradKernel(op -> {
                    int[] inverse = inverse(op.attr("axis"));
                    return a -> {
                        Tensor g = a.in("Out@GRAD");
                        move(g, a.outLike("X@GRAD", a.in("X")), inverse);
                    };
                })
                .build());
    }

    /** out = x with out's dim d taken from x's dim perm[d]. */
    static void move(Tensor x, Tensor out, int[] perm) {
        long[] xStrides = Shapes.strides(x.shape());
        long[] srcStrides = new long[perm.length];
        for (int d = 0; d < perm.length; d++) {
            srcStrides[d] = xStrides[perm[d]];
        }
        StridedCopy.copy(x.segment(), 0, srcStrides, out.segment(), 0, Shapes.strides(out.shape()), out.shape(),
                x.dtype().byteSize());
    }

    static long[] permuted(long[] shape, int[] perm) {
        long[] out = new long[perm.length];
        for (int d = 0; d < perm.length; d++) {
            out[d] = shape[perm[d]];
        }
        return out;
    }

    private static int[] inverse(int[] perm) {
        int[] inv = new int[perm.length];
        for (int d = 0; d < perm.length; d++) {
            inv[perm[d]] = d;
        }
        return inv;
    }

    private static boolean isPermutation(int[] perm, int rank) {
        if (perm.length != rank) {
            return false;
        }
        boolean[] seen = new boolean[rank];
        for (int p : perm) {
            if (p < 0 || p >= rank || seen[p]) {
                return false;
            }
            seen[p] = true;
        }
        return true;
    }
}
