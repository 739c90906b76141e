package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * expand (Paddle's expand_v2): X broadcast to shape, X's dims aligned with shape's last ones; -1 keeps X's dim, and a
 * size-1 dim of X repeats. The gradient sums Out's gradient over the repeats.
 */
@AutoService(OpLibrary.class)
public final class ExpandOp implements OpLibrary {
    public static final String EXPAND = "expand";

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(EXPAND)
                .in("X").out("Out")
                .attr("shape", AttrType.LONGS, null)
                .shape(ctx -> {
                    try {
                        ctx.set("Out", ctx.dtype("X"), expanded(ctx.shape("X"), ctx.op().longsAttr("shape")));
                    } catch (IllegalArgumentException e) {
                        throw ctx.fail(e.getMessage());
                    }
                })
                .kernel(op -> {
                    long[] target = op.longsAttr("shape");
                    return a -> {
                        Tensor x = a.in("X");
                        long[] os = expanded(x.shape(), target);
                        Tensor out = a.out("Out", x.dtype(), os);
                        StridedCopy.copy(x.segment(), 0, Broadcast.strides(x.shape(), os), out.segment(), 0,
                                Shapes.strides(os), os, x.dtype().byteSize());
                    };
                })
                .gradKernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor g = a.in("Out@GRAD");
                    Tensor gx = a.outLike("X@GRAD", x);
                    gx.fill(0);
                    StridedCopy.add(g.segment(), 0, Shapes.strides(g.shape()), gx.segment(), 0,
                            Broadcast.strides(x.shape(), g.shape()), g.shape());
                })
                .build());
    }

    static long[] expanded(long[] x, long[] target) {
        if (target.length < x.length) {
            throw new IllegalArgumentException("shape " + Shapes.str(target) + " has fewer dims than X "
                    + Shapes.str(x) + "; give at least one per dim of X (-1 keeps it)");
        }
        long[] out = target.clone();
        int off = target.length - x.length;
        for (int d = 0; d < target.length; d++) {
            long xd = d < off ? 1 : x[d - off];
            if (target[d] == -1) {
                if (d < off) {
                    throw new IllegalArgumentException("shape " + Shapes.str(target) + ": -1 at " + d
                            + " has no dim of X to keep (X " + Shapes.str(x) + " is aligned with the last dims)");
                }
                out[d] = xd;
            } else if (target[d] < 0 || (xd != 1 && xd >= 0 && xd != target[d])) {
                throw new IllegalArgumentException("X " + Shapes.str(x) + " cannot expand to " + Shapes.str(target)
                        + ": dim " + d + " of the target is " + target[d] + " where X has " + xd
                        + " (only size-1 dims repeat; -1 keeps X's)");
            }
        }
        return out;
    }
}
