package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.Arrays;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * stack (Paddle's op): the vars of X, all of one shape, joined along a new dim inserted at axis (negative counts from
 * the end of Y's shape); the gradient gives each X its slice of Y's gradient.
 */
@AutoService(OpLibrary.class)
public final class StackOp implements OpLibrary {
    public static final String STACK = "stack";

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(STACK)
                .variadicIn("X").out("Y")
                .attr("axis", AttrType.INT, 0)
                .shape(ctx -> {
                    long[] first = ctx.shape("X", 0);
                    for (int j = 1; j < ctx.count("X"); j++) {
                        if (!Arrays.equals(ctx.shape("X", j), first) || ctx.input("X", j).dtype() != ctx.dtype("X")) {
                            throw ctx.fail("every X must have X[0]'s dtype and shape; X[" + j + "] is "
                                    + ctx.input("X", j).dtype().displayName() + Shapes.str(ctx.shape("X", j)));
                        }
                    }
                    int axis = ctx.op().intAttr("axis");
                    if (axis < -(first.length + 1) || axis > first.length) {
                        throw ctx.fail("axis " + axis + " is outside [" + -(first.length + 1) + ", " + first.length
                                + "] for inputs of rank " + first.length);
                    }
                    ctx.set("Y", ctx.dtype("X"), stacked(first, axis, ctx.count("X")));
                })
                .kernel(op -> {
                    int axis = op.intAttr("axis");
                    return a -> {
                        int n = a.inCount("X");
                        Tensor first = a.in("X", 0);
                        long[] ys = stacked(first.shape(), axis, n);
                        Tensor y = a.out("Y", first.dtype(), ys);
                        long[] d = layout(first.shape(), axis);
                        for (int j = 0; j < n; j++) {
                            Tensor x = a.in("X", j);
                            if (!x.hasShape(first.shape())) {
                                throw new IllegalArgumentException("X[" + j + "] " + x.describe() + " differs from X[0] "
                                        + first.describe());
                            }
                            StridedCopy.copy(x.segment(), 0, new long[]{d[1], 1}, y.segment(), j * d[1],
                                    new long[]{n * d[1], 1}, d, x.dtype().byteSize());
                        }
                    };
                })
                .gradKernel(op -> {
                    int axis = op.intAttr("axis");
                    return a -> {
                        Tensor g = a.in("Y@GRAD");
                        int n = a.inCount("X");
                        long[] d = layout(a.in("X", 0).shape(), axis);
                        for (int j = 0; j < a.outCount("X@GRAD"); j++) {
                            Tensor gx = a.out("X@GRAD", j, g.dtype(), a.in("X", j).shape());
                            StridedCopy.copy(g.segment(), j * d[1], new long[]{n * d[1], 1}, gx.segment(), 0,
                                    new long[]{d[1], 1}, d, g.dtype().byteSize());
                        }
                    };
                })
                .build());
    }

    private static int position(int axis, int rank) {
        return axis < 0 ? axis + rank + 1 : axis;
    }

    private static long[] stacked(long[] x, int axis, int n) {
        int ax = position(axis, x.length);
        long[] y = new long[x.length + 1];
        System.arraycopy(x, 0, y, 0, ax);
        y[ax] = n;
        System.arraycopy(x, ax, y, ax + 1, x.length - ax);
        return y;
    }

    /** {the elements of one X before the new dim (outer), those after it (inner)}: each X is [outer, inner]. */
    private static long[] layout(long[] x, int axis) {
        int ax = position(axis, x.length);
        long outer = Shapes.numel(Arrays.copyOfRange(x, 0, ax));
        return new long[]{outer, Shapes.numel(x) / Math.max(outer, 1)};
    }
}
