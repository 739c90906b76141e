package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/** elementwise_add / _sub / _mul / _div with numpy broadcasting (or Paddle's axis), and their gradients. */
@AutoService(OpLibrary.class)
public final class ElementwiseOps implements OpLibrary {
    public static final String ADD = "elementwise_add";
    public static final String SUB = "elementwise_sub";
    public static final String MUL = "elementwise_mul";
    public static final String DIV = "elementwise_div";

    enum Kind { ADD, SUB, MUL, DIV }
    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        for (Kind k : Kind.values()) {
            String type = "elementwise_" + k.name().toLowerCase();
            specs.add(OpSpec.builder(type)
                    .in("X", "Y").out("Out")
                    .attr("axis", AttrType.INT, -1)
                    .shape(ctx -> {
                        ctx.requireFloat("X");
                        if (ctx.dtype("X") != ctx.dtype("Y")) {
                            throw ctx.fail("X and Y must have the same dtype");
                        }
                        long[] out = Broadcast.outShape(ctx.shape("X"), ctx.shape("Y"), ctx.op().intAttr("axis"));
                        if (out == null) {
                            throw ctx.fail("shapes " + Shapes.str(ctx.shape("X")) + " and " + Shapes.str(ctx.shape("Y"))
                                    + " do not broadcast");
                        }
                        ctx.set("Out", ctx.dtype("X"), out);
                    })
                    .kernel(op -> new Forward(k, op.intAttr("axis"), new Layout()))
                    .gradKernel(op -> new Backward(k, op.intAttr("axis"), new Layout()))
                    .build());
        }
        return specs;
    }

    /** Index maps for one pair of input shapes, cached while the shapes stay the same. */
    static final class Layout {
        // null, not {}: scalar inputs have shape {} and must still compute the maps on the first call
        long[] xShape;
        long[] yShape;
        long[] outShape;
        long rowLen;      // > 0: y repeats along rows of length rowLen and x has out's shape
        int[] xMap;       // null: identity
        int[] yMap;

        void update(long[] x, long[] y, int axis) {
            if (Arrays.equals(x, xShape) && Arrays.equals(y, yShape)) {
                return;
            }
            xShape = x;
            yShape = y;
            long[] ya = Broadcast.align(y, x.length, axis);
            outShape = Shapes.broadcast(x, ya);
            if (outShape == null) {
                throw new IllegalArgumentException("shapes " + Shapes.str(x) + " and " + Shapes.str(y) + " do not broadcast");
            }
            boolean xSame = Arrays.equals(x, outShape);
            boolean ySame = Shapes.numel(y) == Shapes.numel(outShape);
            xMap = xSame ? null : Broadcast.indexMap(outShape, Broadcast.strides(x, outShape));
            yMap = ySame ? null : Broadcast.indexMap(outShape, Broadcast.strides(ya, outShape));
            rowLen = xSame && !ySame ? Broadcast.trailingRowLength(outShape, ya) : -1;
        }
    }

    /** Out = X op Y, broadcasting. The layout caches index maps per shape pair. */
    record Forward(Kind kind, int axis, Layout layout) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor y = a.in("Y");
            layout.update(x.shape(), y.shape(), axis);
            Tensor out = a.out("Out", x.dtype(), layout.outShape);
            if (x.dtype() != DType.F32) {
                generic(x, y, out);
                return;
            }
            MemorySegment xs = x.segment();
            MemorySegment ys = y.segment();
            MemorySegment os = out.segment();
            long n = out.numel();
            if (layout.xMap == null && layout.yMap == null) {
                switch (kind) {
                    case ADD -> F32.add(xs, ys, os, n);
                    case SUB -> F32.sub(xs, ys, os, n);
                    case MUL -> F32.mul(xs, ys, os, n);
                    case DIV -> F32.div(xs, ys, os, n);
                }
            } else if (kind == Kind.ADD && layout.rowLen > 0) {
                F32.addRows(xs, ys, os, n / layout.rowLen, layout.rowLen);
            } else {
                int[] xm = layout.xMap;
                int[] ym = layout.yMap;
                for (int i = 0; i < n; i++) {
                    float xv = F32.get(xs, xm == null ? i : xm[i]);
                    float yv = F32.get(ys, ym == null ? i : ym[i]);
                    F32.set(os, i, apply(kind, xv, yv));
                }
            }
        }

        private void generic(Tensor x, Tensor y, Tensor out) {
            int[] xm = layout.xMap;
            int[] ym = layout.yMap;
            for (int i = 0; i < out.numel(); i++) {
                double xv = x.getDouble(xm == null ? i : xm[i]);
                double yv = y.getDouble(ym == null ? i : ym[i]);
                out.setDouble(i, apply(kind, xv, yv));
            }
        }
    }

    static float apply(Kind k, float x, float y) {
        return switch (k) {
            case ADD -> x + y;
            case SUB -> x - y;
            case MUL -> x * y;
            case DIV -> x / y;
        };
    }

    static double apply(Kind k, double x, double y) {
        return switch (k) {
            case ADD -> x + y;
            case SUB -> x - y;
            case MUL -> x * y;
            case DIV -> x / y;
        };
    }

    /** dX and dY, summed over the dimensions each input was broadcast along. The layout caches index maps per shape pair. */
    record Backward(Kind kind, int axis, Layout layout) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor y = a.in("Y");
            Tensor g = a.in("Out@GRAD");
            layout.update(x.shape(), y.shape(), axis);
            boolean wantX = a.hasOut("X@GRAD");
            boolean wantY = a.hasOut("Y@GRAD");
            // X's gradient of a sum is Out's, passed on without a copy (passOn) when X was not broadcast and the
            // fast paths below (Y a row, or Y of X's shape) run
            boolean xIsOut = kind == Kind.ADD && layout.xMap == null && x.dtype() == DType.F32
                    && (layout.rowLen > 0 || layout.yMap == null);
            Tensor gx = wantX && !xIsOut ? a.outLike("X@GRAD", x) : null;
            Tensor gy = wantY ? a.outLike("Y@GRAD", y) : null;
            long n = g.numel();
            if (kind == Kind.ADD && layout.rowLen > 0 && x.dtype() == DType.F32) {
                if (wantX) {
                    passOn(a, g);
                }
                if (wantY) {
                    F32.sumRows(g.segment(), gy.segment(), n / layout.rowLen, layout.rowLen);
                }
                return;
            }
            if (layout.xMap == null && layout.yMap == null && x.dtype() == DType.F32) {
                sameShapeF32(a, g.segment(), x, y, gx, gy, n);
                return;
            }
            if (wantX) {
                gx.fill(0);
            }
            if (wantY) {
                gy.fill(0);
            }
            int[] xm = layout.xMap;
            int[] ym = layout.yMap;
            Tensor out = kind == Kind.DIV ? a.in("Out") : null;
            for (int i = 0; i < n; i++) {
                int xi = xm == null ? i : xm[i];
                int yi = ym == null ? i : ym[i];
                double gv = g.getDouble(i);
                if (wantX) {
                    double d = switch (kind) {
                        case ADD, SUB -> gv;
                        case MUL -> gv * y.getDouble(yi);
                        case DIV -> gv / y.getDouble(yi);
                    };
                    gx.setDouble(xi, gx.getDouble(xi) + d);
                }
                if (wantY) {
                    double d = switch (kind) {
                        case ADD -> gv;
                        case SUB -> -gv;
                        case MUL -> gv * x.getDouble(xi);
                        case DIV -> -gv * out.getDouble(i) / y.getDouble(yi);
                    };
                    gy.setDouble(yi, gy.getDouble(yi) + d);
                }
            }
        }

        /**
         * X@GRAD = Out@GRAD for Out = X + Y: the gradient tensor itself becomes X's (Out's gradient has no other
         * reader), unless X@GRAD already holds a tensor of its own that others see, such as a view into a gradient
         * bucket (gather_bucket), which is then written in place.
         */
        private static void passOn(KernelArgs a, Tensor g) {
            Object current = a.outValue("X@GRAD", 0);
            if (current instanceof Tensor t && t != g && t.hasShape(g.shape()) && t.dtype() == g.dtype()) {
                t.copyFrom(g);
            } else {
                a.setOut("X@GRAD", g);
            }
        }

        /** No broadcasting: each gradient is one vector pass, no accumulation. */
        private void sameShapeF32(KernelArgs a, MemorySegment g, Tensor x, Tensor y, Tensor gx, Tensor gy, long n) {
            if (kind == Kind.ADD && a.hasOut("X@GRAD")) {
                passOn(a, a.in("Out@GRAD"));
            } else if (gx != null) {
                switch (kind) {
                    case ADD, SUB -> F32.copy(g, gx.segment(), n);
                    case MUL -> F32.mul(g, y.segment(), gx.segment(), n);
                    case DIV -> F32.div(g, y.segment(), gx.segment(), n);
                }
            }
            if (gy != null) {
                switch (kind) {
                    case ADD -> F32.copy(g, gy.segment(), n);
                    case SUB -> F32.scale(g, -1f, gy.segment(), n);
                    case MUL -> F32.mul(g, x.segment(), gy.segment(), n);
                    case DIV -> F32.divGradY(g, a.in("Out").segment(), y.segment(), gy.segment(), n);
                }
            }
        }
    }
}
