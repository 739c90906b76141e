package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/** concat: joins tensors along one axis (negative counts from the end); the gradient splits Out's gradient back. */
@AutoService(OpLibrary.class)
public final class ConcatOp implements OpLibrary {
    public static final String CONCAT = "concat";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(CONCAT)
                .variadicIn("X").out("Out")
                .attr("axis", AttrType.INT, 0)
                .shape(ConcatOp::inferShape)
                .kernel(op -> {
                    int axis = op.intAttr("axis");
                    return a -> {
                        int n = a.inCount("X");
                        Tensor first = a.in("X", 0);
                        int ax = normalise(axis, first.rank());
                        long[] os = first.shape();
                        os[ax] = 0;
                        for (int j = 0; j < n; j++) {
                            Tensor t = a.in("X", j);
                            checkFits(first, t, ax, j);
                            os[ax] += t.dim(ax);
                        }
                        Tensor out = a.out("Out", first.dtype(), os);
                        long outer = outer(os, ax);
                        long outRow = os[ax] * inner(os, ax) * first.dtype().byteSize();
                        long offset = 0;
                        for (int j = 0; j < n; j++) {
                            Tensor t = a.in("X", j);
                            long row = t.dim(ax) * inner(os, ax) * t.dtype().byteSize();
                            MemorySegment src = t.segment();
                            for (long o = 0; o < outer; o++) {
                                MemorySegment.copy(src, o * row, out.segment(), o * outRow + offset, row);
                            }
                            offset += row;
                        }
                    };
                })
                .gradKernel(op -> {
                    int axis = op.intAttr("axis");
                    return a -> {
                        Tensor g = a.in("Out@GRAD");
                        int ax = normalise(axis, g.rank());
                        long[] gs = g.shape();
                        long outer = outer(gs, ax);
                        long inner = inner(gs, ax);
                        long gRow = gs[ax] * inner * g.dtype().byteSize();
                        long offset = 0;
                        for (int j = 0; j < a.inCount("X"); j++) {
                            Tensor x = a.in("X", j);
                            long row = x.dim(ax) * inner * g.dtype().byteSize();
                            if (j < a.outCount("X@GRAD")) {
                                Tensor gx = a.out("X@GRAD", j, g.dtype(), x.shape());
                                for (long o = 0; o < outer; o++) {
                                    MemorySegment.copy(g.segment(), o * gRow + offset, gx.segment(), o * row, row);
                                }
                            }
                            offset += row;
                        }
                    };
                })
                .build());
        return specs;
    }

    private static void inferShape(InferContext ctx) {
        long[] first = ctx.shape("X", 0);
        int axis = ctx.op().intAttr("axis");
        if (axis < -first.length || axis >= first.length) {
            throw ctx.fail("axis " + axis + " is outside [" + -first.length + ", " + first.length + ") for rank "
                    + first.length);
        }
        int ax = normalise(axis, first.length);
        long[] out = first.clone();
        for (int j = 1; j < ctx.count("X"); j++) {
            long[] s = ctx.shape("X", j);
            if (s.length != first.length || ctx.input("X", j).dtype() != ctx.dtype("X")) {
                throw ctx.fail("every X must have X[0]'s dtype and rank; X[" + j + "] is "
                        + ctx.input("X", j).dtype().displayName() + Shapes.str(s));
            }
            for (int d = 0; d < s.length; d++) {
                if (d == ax) {
                    out[d] = out[d] < 0 || s[d] < 0 ? -1 : out[d] + s[d];
                } else if (out[d] >= 0 && s[d] >= 0 && out[d] != s[d]) {
                    throw ctx.fail("X[" + j + "] " + Shapes.str(s) + " differs from X[0] " + Shapes.str(first)
                            + " in dimension " + d + " (only axis " + ax + " may differ)");
                } else if (out[d] < 0) {
                    out[d] = s[d];
                }
            }
        }
        ctx.set("Out", ctx.dtype("X"), out);
    }

    private static void checkFits(Tensor first, Tensor t, int ax, int j) {
        boolean fits = t.rank() == first.rank() && t.dtype() == first.dtype();
        for (int d = 0; fits && d < t.rank(); d++) {
            fits = d == ax || t.dim(d) == first.dim(d);
        }
        if (!fits) {
            throw new IllegalArgumentException("X[" + j + "] " + t.describe() + " does not fit X[0] " + first.describe()
                    + " along axis " + ax);
        }
    }

    static int normalise(int axis, int rank) {
        return axis < 0 ? axis + rank : axis;
    }

    private static long outer(long[] s, int ax) {
        long n = 1;
        for (int d = 0; d < ax; d++) {
            n *= s[d];
        }
        return n;
    }

    private static long inner(long[] s, int ax) {
        long n = 1;
        for (int d = ax + 1; d < s.length; d++) {
            n *= s[d];
        }
        return n;
    }
}
