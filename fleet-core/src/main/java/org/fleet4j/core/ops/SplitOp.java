package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.Arrays;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Tensor;

/**
 * split (Paddle's op): X cut along axis into the vars of Out, either num equal parts or parts of the sizes in sections
 * (one of which may be -1: the rest). The gradient joins Out's gradients back (Backward gives an output that the loss
 * does not use a zero gradient).
 */
@AutoService(OpLibrary.class)
public final class SplitOp implements OpLibrary {
    public static final String SPLIT = "split";

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(SPLIT)
                .in("X").out("Out")
                .attr("axis", AttrType.INT, 0)
                .attr("num", AttrType.INT, 0)
                .attr("sections", AttrType.INTS, new int[0])
                .shape(ctx -> {
                    long[] x = ctx.shape("X");
                    int axis = ctx.op().intAttr("axis");
                    if (axis < -x.length || axis >= x.length) {
                        throw ctx.fail("axis " + axis + " is outside [" + -x.length + ", " + x.length + ") for X of rank "
                                + x.length);
                    }
                    int ax = Axis.normalise(axis, x.length);
                    int outs = ctx.op().output("Out").size();
                    long[] sizes;
                    try {
                        sizes = sizes(x[ax], ctx.op().intAttr("num"), ctx.op().attr("sections"), outs);
                    } catch (IllegalArgumentException e) {
                        throw ctx.fail(e.getMessage());
                    }
                    for (int j = 0; j < outs; j++) {
                        long[] s = x.clone();
                        s[ax] = sizes[j];
                        ctx.set("Out", j, ctx.dtype("X"), s);
                    }
                })
                .kernel(op -> {
                    int axis = op.intAttr("axis");
                    int num = op.intAttr("num");
                    int[] sections = op.attr("sections");
                    return a -> {
                        Tensor x = a.in("X");
                        int ax = Axis.normalise(axis, x.rank());
                        long[] d = Axis.split(x.shape(), ax);
                        long[] sizes = sizes(d[1], num, sections, a.outCount("Out"));
                        long start = 0;
                        for (int j = 0; j < sizes.length; j++) {
                            long[] s = x.shape();
                            s[ax] = sizes[j];
                            Tensor out = a.out("Out", j, x.dtype(), s);
                            long[] box = {d[0], sizes[j] * d[2]};
                            StridedCopy.copy(x.segment(), start * d[2], new long[]{d[1] * d[2], 1}, out.segment(), 0,
                                    new long[]{box[1], 1}, box, x.dtype().byteSize());
                            start += sizes[j];
                        }
                    };
                })
                .gradKernel(op -> {
                    int axis = op.intAttr("axis");
                    return a -> {
                        Tensor x = a.in("X");
                        Tensor gx = a.outLike("X@GRAD", x);
                        int ax = Axis.normalise(axis, x.rank());
                        long[] d = Axis.split(x.shape(), ax);
                        long start = 0;
                        for (int j = 0; j < a.inCount("Out@GRAD"); j++) {
                            Tensor g = a.in("Out@GRAD", j);
                            long size = g.dim(ax);
                            long[] box = {d[0], size * d[2]};
                            StridedCopy.copy(g.segment(), 0, new long[]{box[1], 1}, gx.segment(), start * d[2],
                                    new long[]{d[1] * d[2], 1}, box, x.dtype().byteSize());
                            start += size;
                        }
                    };
                })
                .build());
    }

    /** The sizes of the parts of a dim of length {@code dim} (-1: unknown) for num or sections and this many outputs. */
    static long[] sizes(long dim, int num, int[] sections, int outs) {
        if (sections.length > 0) {
            if (num > 0) {
                throw new IllegalArgumentException("give num or sections, not both (num " + num + ", sections "
                        + Arrays.toString(sections) + ")");
            }
            if (sections.length != outs) {
                throw new IllegalArgumentException("sections " + Arrays.toString(sections) + " makes " + sections.length
                        + " parts but Out has " + outs + " vars");
            }
            long[] sizes = new long[outs];
            long known = 0;
            int rest = -1;
            for (int j = 0; j < outs; j++) {
                sizes[j] = sections[j];
                if (sections[j] == -1 && rest < 0) {
                    rest = j;
                } else if (sections[j] < 0) {
                    throw new IllegalArgumentException("sections " + Arrays.toString(sections) + " may hold one -1 and"
                            + " sizes >= 0 otherwise");
                } else {
                    known += sections[j];
                }
            }
            if (rest >= 0) {
                sizes[rest] = dim < 0 ? -1 : dim - known;
            }
            if (dim >= 0 && (known > dim || rest < 0 && known != dim)) {
                throw new IllegalArgumentException("sections " + Arrays.toString(sections) + " do not add up to the"
                        + " axis's size " + dim);
            }
            return sizes;
        }
        if (num <= 0 || num != outs) {
            throw new IllegalArgumentException("num " + num + " must be positive and equal to the " + outs
                    + " vars of Out (or give sections)");
        }
        if (dim >= 0 && dim % num != 0) {
            throw new IllegalArgumentException("the axis's size " + dim + " does not divide into num " + num
                    + " equal parts; give sections instead");
        }
        long[] sizes = new long[num];
        Arrays.fill(sizes, dim < 0 ? -1 : dim / num);
        return sizes;
    }
}
