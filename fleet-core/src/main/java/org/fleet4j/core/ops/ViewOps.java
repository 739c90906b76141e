package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiFunction;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * Ops whose Out is X's storage under another shape, like reshape (no copy; the gradient is Out's gradient under X's
 * shape): flatten (Paddle's flatten_contiguous_range: dims start_axis..stop_axis become one), squeeze (drops the size-1
 * dims of axes, or every size-1 dim when axes is empty; a listed dim of another size stays, as in Paddle and PyTorch)
 * and unsqueeze (inserts a size-1 dim at each of axes, in order, each counted in the shape made so far).
 */
@AutoService(OpLibrary.class)
public final class ViewOps implements OpLibrary {
    public static final String FLATTEN = "flatten";
    public static final String SQUEEZE = "squeeze";
    public static final String UNSQUEEZE = "unsqueeze";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(view(OpSpec.builder(FLATTEN)
                .attr("start_axis", AttrType.INT, 1)
                .attr("stop_axis", AttrType.INT, -1), ViewOps::flattened));
        specs.add(view(OpSpec.builder(SQUEEZE).attr("axes", AttrType.INTS, new int[0]), ViewOps::squeezed));
        specs.add(view(OpSpec.builder(UNSQUEEZE).attr("axes", AttrType.INTS, null), ViewOps::unsqueezed));
        return specs;
    }

    /** A view op whose Out shape {@code shapeOf} computes from X's (unknown dims as -1) and the op's attributes. */
    private static OpSpec view(OpSpec.Builder b, BiFunction<long[], Op, long[]> shapeOf) {
        return b.in("X").out("Out")
                .shape(ctx -> {
                    try {
                        ctx.set("Out", ctx.dtype("X"), shapeOf.apply(ctx.shape("X"), ctx.op()));
                    } catch (IllegalArgumentException e) {
                        throw ctx.fail(e.getMessage());
                    }
                })
                .kernel(op -> a -> {
                    Tensor x = a.in("X");
                    a.setOut("Out", x.reshape(shapeOf.apply(x.shape(), op)));
                })
                .gradKernel(op -> a -> a.setOut("X@GRAD", a.in("Out@GRAD").reshape(a.in("X").shape())))
                .build();
    }

    private static long[] flattened(long[] x, Op op) {
        int rank = x.length;
        int start = Axis.normalise(op.intAttr("start_axis"), rank);
        int stop = Axis.normalise(op.intAttr("stop_axis"), rank);
        if (rank == 0 || start < 0 || start >= rank || stop < start || stop >= rank) {
            throw new IllegalArgumentException("start_axis " + op.intAttr("start_axis") + " and stop_axis "
                    + op.intAttr("stop_axis") + " must name dims of X (rank " + rank + ") with start <= stop");
        }
        long[] out = new long[rank - (stop - start)];
        System.arraycopy(x, 0, out, 0, start);
        long[] merged = Arrays.copyOfRange(x, start, stop + 1);
        out[start] = Shapes.knownNumel(merged);
        System.arraycopy(x, stop + 1, out, start + 1, rank - stop - 1);
        return out;
    }

    private static long[] squeezed(long[] x, Op op) {
        int[] axes = op.attr("axes");
        boolean[] drop = new boolean[x.length];
        for (int ax : axes) {
            int d = Axis.normalise(ax, x.length);
            if (d < 0 || d >= x.length) {
                throw new IllegalArgumentException("axes " + Arrays.toString(axes) + " names dim " + ax
                        + ", outside X's rank " + x.length);
            }
            drop[d] = x[d] == 1;
        }
        List<Long> out = new ArrayList<>();
        for (int d = 0; d < x.length; d++) {
            if (!(axes.length == 0 ? x[d] == 1 : drop[d])) {
                out.add(x[d]);
            }
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    private static long[] unsqueezed(long[] x, Op op) {
        int[] axes = op.attr("axes");
        if (axes.length == 0) {
            throw new IrException("unsqueeze needs at least one axis in axes");
        }
        List<Long> out = new ArrayList<>();
        for (long d : x) {
            out.add(d);
        }
        for (int ax : axes) {
            int d = ax < 0 ? ax + out.size() + 1 : ax;
            if (d < 0 || d > out.size()) {
                throw new IllegalArgumentException("axes " + Arrays.toString(axes) + ": axis " + ax
                        + " is outside [" + -(out.size() + 1) + ", " + out.size() + "] for a shape of rank " + out.size());
            }
            out.add(d, 1L);
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }
}
