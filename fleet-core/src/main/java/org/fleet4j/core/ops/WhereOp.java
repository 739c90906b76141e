package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.Arrays;
import java.util.List;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * where: Out = Condition ? X : Y elementwise, the three broadcast numpy-style; Condition is true where it is nonzero
 * (any dtype). The gradients of X and Y are Out's where each was chosen, summed over the dims it was broadcast along.
 */
@AutoService(OpLibrary.class)
public final class WhereOp implements OpLibrary {
    public static final String WHERE = "where";

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(WHERE)
                .in("Condition", "X", "Y").out("Out")
                .noGrad("Condition")
                .shape(ctx -> {
                    if (ctx.dtype("X") != ctx.dtype("Y")) {
                        throw ctx.fail("X and Y must have one dtype, are " + ctx.dtype("X").displayName() + " and "
                                + ctx.dtype("Y").displayName());
                    }
                    long[] xy = Shapes.broadcast(ctx.shape("X"), ctx.shape("Y"));
                    long[] out = xy == null ? null : Shapes.broadcast(ctx.shape("Condition"), xy);
                    if (out == null) {
                        throw ctx.fail("Condition, X and Y do not broadcast to one shape (each pair of trailing dims"
                                + " must be equal or 1)");
                    }
                    ctx.set("Out", ctx.dtype("X"), out);
                })
                .kernel(op -> {
                    Layout layout = new Layout();
                    return a -> {
                        Tensor c = a.in("Condition");
                        Tensor x = a.in("X");
                        Tensor y = a.in("Y");
                        layout.update(c.shape(), x.shape(), y.shape());
                        Tensor out = a.out("Out", x.dtype(), layout.out);
                        for (int i = 0; i < out.numel(); i++) {
                            out.setDouble(i, c.getDouble(layout.c[i]) != 0 ? x.getDouble(layout.x[i])
                                    : y.getDouble(layout.y[i]));
                        }
                    };
                })
                .gradKernel(op -> {
                    Layout layout = new Layout();
                    return a -> {
                        Tensor c = a.in("Condition");
                        Tensor x = a.in("X");
                        Tensor y = a.in("Y");
                        Tensor g = a.in("Out@GRAD");
                        layout.update(c.shape(), x.shape(), y.shape());
                        Tensor gx = a.hasOut("X@GRAD") ? a.outLike("X@GRAD", x) : null;
                        Tensor gy = a.hasOut("Y@GRAD") ? a.outLike("Y@GRAD", y) : null;
                        if (gx != null) {
                            gx.fill(0);
                        }
                        if (gy != null) {
                            gy.fill(0);
                        }
                        for (int i = 0; i < g.numel(); i++) {
                            boolean chosen = c.getDouble(layout.c[i]) != 0;
                            Tensor target = chosen ? gx : gy;
                            if (target != null) {
                                int at = chosen ? layout.x[i] : layout.y[i];
                                target.setDouble(at, target.getDouble(at) + g.getDouble(i));
                            }
                        }
                    };
                })
                .build());
    }

    /** Per output element, the element of each input it reads; cached while the shapes stay the same. */
    private static final class Layout {
        private long[] shapes;
        long[] out;
        int[] c;
        int[] x;
        int[] y;

        void update(long[] cs, long[] xs, long[] ys) {
            long[] key = concat(cs, xs, ys);
            if (Arrays.equals(key, shapes)) {
                return;
            }
            long[] xy = Shapes.broadcast(xs, ys);
            out = xy == null ? null : Shapes.broadcast(cs, xy);
            if (out == null) {
                throw new IllegalArgumentException("where: Condition " + Shapes.str(cs) + ", X " + Shapes.str(xs)
                        + " and Y " + Shapes.str(ys) + " do not broadcast");
            }
            c = Broadcast.indexMap(out, Broadcast.strides(cs, out));
            x = Broadcast.indexMap(out, Broadcast.strides(xs, out));
            y = Broadcast.indexMap(out, Broadcast.strides(ys, out));
            shapes = key;
        }

        private static long[] concat(long[] a, long[] b, long[] c) {
            long[] k = new long[a.length + b.length + c.length + 3];
            int i = 0;
            for (long[] s : new long[][]{a, b, c}) {
                k[i++] = s.length;
                for (long d : s) {
                    k[i++] = d;
                }
            }
            return k;
        }
    }
}
