package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.Arrays;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * slice (Paddle's op): along each of axes, Out keeps Input's elements [starts[i], ends[i]); a negative start or end
 * counts from the dim's end, and both are clamped to [0, dim], as in Python slicing. The gradient is Out's gradient
 * placed back in a zero tensor of Input's shape.
 */
@AutoService(OpLibrary.class)
public final class SliceOp implements OpLibrary {
    public static final String SLICE = "slice";

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(SLICE)
                .in("Input").out("Out")
                .attr("axes", AttrType.INTS, null)
                .attr("starts", AttrType.LONGS, null)
                .attr("ends", AttrType.LONGS, null)
                .shape(ctx -> {
                    long[] x = ctx.shape("Input");
                    int[] axes = ctx.op().attr("axes");
                    long[] starts = ctx.op().longsAttr("starts");
                    long[] ends = ctx.op().longsAttr("ends");
                    if (axes.length != starts.length || axes.length != ends.length) {
                        throw ctx.fail("axes " + Arrays.toString(axes) + ", starts " + Arrays.toString(starts)
                                + " and ends " + Arrays.toString(ends) + " must have one entry per sliced axis");
                    }
                    boolean[] seen = new boolean[x.length];
                    for (int ax : axes) {
                        int d = Axis.normalise(ax, x.length);
                        if (d < 0 || d >= x.length || seen[d]) {
                            throw ctx.fail("axes " + Arrays.toString(axes) + " must name distinct dims of Input (rank "
                                    + x.length + ")");
                        }
                        seen[d] = true;
                    }
                    ctx.set("Out", ctx.dtype("Input"), box(x, axes, starts, ends)[1]);
                })
                .kernel(op -> {
                    int[] axes = op.attr("axes");
                    long[] starts = op.longsAttr("starts");
                    long[] ends = op.longsAttr("ends");
                    return a -> {
                        Tensor x = a.in("Input");
                        long[][] b = box(x.shape(), axes, starts, ends);
                        Tensor out = a.out("Out", x.dtype(), b[1]);
                        long[] strides = Shapes.strides(x.shape());
                        StridedCopy.copy(x.segment(), offset(b[0], strides), strides, out.segment(), 0,
                                Shapes.strides(b[1]), b[1], x.dtype().byteSize());
                    };
                })
                .gradKernel(op -> {
                    int[] axes = op.attr("axes");
                    long[] starts = op.longsAttr("starts");
                    long[] ends = op.longsAttr("ends");
                    return a -> {
                        Tensor x = a.in("Input");
                        Tensor g = a.in("Out@GRAD");
                        Tensor gx = a.outLike("Input@GRAD", x);
                        gx.fill(0);
                        long[][] b = box(x.shape(), axes, starts, ends);
                        long[] strides = Shapes.strides(x.shape());
                        StridedCopy.copy(g.segment(), 0, Shapes.strides(b[1]), gx.segment(), offset(b[0], strides),
                                strides, b[1], g.dtype().byteSize());
                    };
                })
                .build());
    }

    /** {first index, size} per dim of the sliced box; an unknown dim (-1) stays unknown. */
    static long[][] box(long[] x, int[] axes, long[] starts, long[] ends) {
        long[] first = new long[x.length];
        long[] size = x.clone();
        for (int i = 0; i < axes.length; i++) {
            int d = Axis.normalise(axes[i], x.length);
            long dim = x[d];
            if (dim < 0) {
                size[d] = -1;
                continue;
            }
            long s = clamp(starts[i] < 0 ? starts[i] + dim : starts[i], dim);
            long e = clamp(ends[i] < 0 ? ends[i] + dim : ends[i], dim);
            first[d] = s;
            size[d] = Math.max(0, e - s);
        }
        return new long[][]{first, size};
    }

    private static long clamp(long v, long dim) {
        return Math.max(0, Math.min(v, dim));
    }

    static long offset(long[] index, long[] strides) {
        long o = 0;
        for (int d = 0; d < index.length; d++) {
            o += index[d] * strides[d];
        }
        return o;
    }
}
