package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Paddle's {@code pool2d} over NCHW float32: X -> Out, max or average over windows of ksize moved by strides, with
 * paddings (2 or 4 values, or padding_algorithm SAME/VALID) that are never pooled themselves, ceil_mode (a last,
 * partial window), exclusive (an average divides by the window's part inside the input rather than kh kw),
 * global_pooling (one window of the whole image) and adaptive (ksize is the output size; windows
 * [floor(i h / oh), ceil((i + 1) h / oh)), PyTorch's adaptive_avg_pool2d and adaptive_max_pool2d). The max gradient
 * goes to the first maximum of each window, as in Paddle and PyTorch. A window wholly in the padding gives 0.
 */
@AutoService(OpLibrary.class)
public final class PoolOps implements OpLibrary {
    public static final String POOL2D = "pool2d";

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(POOL2D)
                .in("X").out("Out")
                .attr("pooling_type", AttrType.STRING, "max")
                .attr("ksize", AttrType.INTS, null)
                .attr("global_pooling", AttrType.BOOL, false)
                .attr("strides", AttrType.INTS, new int[]{1, 1})
                .attr("paddings", AttrType.INTS, new int[]{0, 0})
                .attr("exclusive", AttrType.BOOL, true)
                .attr("adaptive", AttrType.BOOL, false)
                .attr("ceil_mode", AttrType.BOOL, false)
                .attr("data_format", AttrType.STRING, "NCHW")
                .attr("padding_algorithm", AttrType.STRING, "EXPLICIT")
                .shape(PoolOps::inferShape)
                .kernel(op -> new Forward(PoolGeometry.Attrs.of(op)))
                .gradKernel(op -> new Backward(PoolGeometry.Attrs.of(op)))
                .build());
    }

    private static void inferShape(InferContext ctx) {
        if (ctx.dtype("X") != DType.F32) {
            throw ctx.fail("X must be float32 (the CPU kernel is float32), is " + ctx.dtype("X").displayName());
        }
        if (!ctx.op().stringAttr("data_format").equals("NCHW")) {
            throw ctx.fail("data_format '" + ctx.op().stringAttr("data_format") + "' is not supported; the CPU kernel "
                    + "takes NCHW");
        }
        PoolGeometry g;
        try {
            g = PoolGeometry.of(ctx.shape("X"), PoolGeometry.Attrs.of(ctx.op()));
        } catch (IllegalArgumentException e) {
            throw ctx.fail(e.getMessage());
        }
        ctx.set("Out", DType.F32, g.n(), g.c(), g.oh(), g.ow());
    }

    /** The geometry for a step's X, recomputed only when X's shape changes. */
    private abstract static class PoolKernel implements Kernel {
        private final PoolGeometry.Attrs attrs;
        private PoolGeometry geometry;
        private long[] shape;

        PoolKernel(PoolGeometry.Attrs attrs) {
            this.attrs = attrs;
        }

        PoolGeometry geometry(Tensor x) {
            if (geometry == null || !x.hasShape(shape)) {
                shape = x.shape();
                geometry = PoolGeometry.of(shape, attrs);
            }
            return geometry;
        }

        boolean max() {
            return attrs.max();
        }
    }

    private static final class Forward extends PoolKernel {
        Forward(PoolGeometry.Attrs attrs) {
            super(attrs);
        }

        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            PoolGeometry g = geometry(x);
            Tensor out = a.out("Out", DType.F32, g.n(), g.c(), g.oh(), g.ow());
            MemorySegment xs = x.segment();
            MemorySegment os = out.segment();
            int w = (int) g.w();
            for (long plane = 0; plane < g.n() * g.c(); plane++) {
                long in = plane * g.h() * w;
                long o = plane * g.oh() * g.ow();
                for (int oy = 0; oy < g.oh(); oy++) {
                    int r0 = g.rowStart()[oy];
                    int r1 = g.rowEnd()[oy];
                    for (int ox = 0; ox < g.ow(); ox++, o++) {
                        int c0 = g.colStart()[ox];
                        int c1 = g.colEnd()[ox];
                        float v;
                        if (r0 == r1 || c0 == c1) {
                            v = 0f;
                        } else if (max()) {
                            v = Float.NEGATIVE_INFINITY;
                            for (int iy = r0; iy < r1; iy++) {
                                long row = in + (long) iy * w;
                                for (int ix = c0; ix < c1; ix++) {
                                    v = Math.max(v, xs.getAtIndex(F32.F, row + ix));
                                }
                            }
                        } else {
                            float sum = 0f;
                            for (int iy = r0; iy < r1; iy++) {
                                long row = in + (long) iy * w;
                                for (int ix = c0; ix < c1; ix++) {
                                    sum += xs.getAtIndex(F32.F, row + ix);
                                }
                            }
                            v = sum / g.divisor(oy, ox);
                        }
                        os.setAtIndex(F32.F, o, v);
                    }
                }
            }
        }
    }

    private static final class Backward extends PoolKernel {
        Backward(PoolGeometry.Attrs attrs) {
            super(attrs);
        }

        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            PoolGeometry g = geometry(x);
            MemorySegment xs = x.segment();
            MemorySegment outs = a.in("Out").segment();
            MemorySegment dy = a.in("Out@GRAD").segment();
            Tensor dxT = a.outLike("X@GRAD", x);
            MemorySegment dx = dxT.segment();
            dx.fill((byte) 0);
            int w = (int) g.w();
            for (long plane = 0; plane < g.n() * g.c(); plane++) {
                long in = plane * g.h() * w;
                long o = plane * g.oh() * g.ow();
                for (int oy = 0; oy < g.oh(); oy++) {
                    int r0 = g.rowStart()[oy];
                    int r1 = g.rowEnd()[oy];
                    for (int ox = 0; ox < g.ow(); ox++, o++) {
                        int c0 = g.colStart()[ox];
                        int c1 = g.colEnd()[ox];
                        if (r0 == r1 || c0 == c1) {
                            continue;
                        }
                        float grad = dy.getAtIndex(F32.F, o);
                        if (max()) {
                            long at = firstMax(xs, in, w, r0, r1, c0, c1, outs.getAtIndex(F32.F, o));
                            dx.setAtIndex(F32.F, at, dx.getAtIndex(F32.F, at) + grad);
                        } else {
                            float share = grad / g.divisor(oy, ox);
                            for (int iy = r0; iy < r1; iy++) {
                                long row = in + (long) iy * w;
                                for (int ix = c0; ix < c1; ix++) {
                                    dx.setAtIndex(F32.F, row + ix, dx.getAtIndex(F32.F, row + ix) + share);
                                }
                            }
                        }
                    }
                }
            }
        }

        /** The index of the window's first element equal to its maximum (the first, should none equal it). */
        private static long firstMax(MemorySegment xs, long in, int w, int r0, int r1, int c0, int c1, float max) {
            for (int iy = r0; iy < r1; iy++) {
                long row = in + (long) iy * w;
                for (int ix = c0; ix < c1; ix++) {
                    if (xs.getAtIndex(F32.F, row + ix) == max) {
                        return row + ix;
                    }
                }
            }
            return in + (long) r0 * w + c0;
        }
    }
}
