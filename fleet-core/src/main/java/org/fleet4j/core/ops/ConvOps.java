package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.List;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Paddle's 2-D convolutions over NCHW float32: {@code conv2d} and {@code depthwise_conv2d} (Input [n, c, h, w],
 * Filter [f, c / groups, kh, kw] -> Output [n, f, oh, ow]) and {@code conv2d_transpose} (Input [n, c, h, w], Filter
 * [c, f / groups, kh, kw] -> Output [n, f, oh, ow], the adjoint of conv2d). Attributes as Paddle's: strides,
 * paddings (2 values, or 4 as [top, bottom, left, right]), padding_algorithm (EXPLICIT, SAME, VALID), dilations,
 * groups, data_format (NCHW); conv2d_transpose also output_padding and output_size. There is no bias: as in Paddle,
 * a bias is an {@code elementwise_add} with axis 1 after the convolution.
 * <p>conv2d of stride 1 and one group runs its forward pass and input gradient on the direct kernel of
 * {@link DirectConvolution}, which measured 1-2.5x faster than im2col + OpenBLAS at lenet's and ResNet's shapes; other
 * conv2d, every filter gradient and conv2d_transpose run as im2col + GEMM ({@link Convolution}); depthwise_conv2d, and
 * conv2d whose groups equal its input channels, run the direct loops of {@link DepthwiseConvolution}.
 */
@AutoService(OpLibrary.class)
public final class ConvOps implements OpLibrary {
    public static final String CONV2D = "conv2d";
    public static final String DEPTHWISE_CONV2D = "depthwise_conv2d";
    public static final String CONV2D_TRANSPOSE = "conv2d_transpose";

    @Override
    public List<OpSpec> specs() {
        return List.of(
                convAttrs(OpSpec.builder(CONV2D))
                        .shape(ctx -> inferShape(ctx, false))
                        .kernel(op -> new Forward(ConvGeometry.Attrs.of(op), new Convolution(Blas.get(), CONV2D),
                                new DirectConvolution()))
                        .gradKernel(op -> new Backward(ConvGeometry.Attrs.of(op), new Convolution(Blas.get(), CONV2D),
                                new DirectConvolution()))
                        .build(),
                convAttrs(OpSpec.builder(DEPTHWISE_CONV2D))
                        .shape(ctx -> inferShape(ctx, true))
                        .kernel(op -> new Forward(ConvGeometry.Attrs.of(op), null, null))
                        .gradKernel(op -> new Backward(ConvGeometry.Attrs.of(op), null, null))
                        .build(),
                convAttrs(OpSpec.builder(CONV2D_TRANSPOSE))
                        .attr("output_padding", AttrType.INTS, new int[0])
                        .attr("output_size", AttrType.INTS, new int[0])
                        .shape(ConvOps::inferTransposedShape)
                        .kernel(op -> new TransposedForward(op, new Convolution(Blas.get(), CONV2D_TRANSPOSE)))
                        .gradKernel(op -> new TransposedBackward(op, new Convolution(Blas.get(), CONV2D_TRANSPOSE)))
                        .build());
    }

    /**
     * The attributes that the conv ops share (strides, paddings, padding_algorithm, groups, dilations, data_format)
     * declared on {@code b} with Paddle's defaults, for an op that convolves as they do.
     */
    public static OpSpec.Builder withConvAttributes(OpSpec.Builder b) {
        return convAttrs(b);
    }

    /** depthwise_conv2d's shape inference (Input, Filter -> Output), for an op that convolves as it does. */
    public static void inferDepthwiseShape(InferContext ctx) {
        inferShape(ctx, true);
    }

    /**
     * depthwise_conv2d's kernel reading relu(Input) wherever it reads Input: Output = depthwise_conv2d(relu(Input),
     * Filter) without storing relu(Input) (the fused relu + depthwise convolution of core.ops.fused).
     */
    public static Kernel reluInputDepthwiseKernel(Op op) {
        ConvGeometry.Attrs attrs = ConvGeometry.Attrs.of(op);
        return a -> {
            Tensor x = a.in("Input");
            Tensor w = a.in("Filter");
            ConvGeometry g = geometry(attrs, x, w);
            Tensor y = a.out("Output", DType.F32, g.n(), g.f(), g.oh(), g.ow());
            DepthwiseConvolution.forward(g, x.segment(), w.segment(), y.segment(), true);
        };
    }

    /**
     * The gradients of {@link #reluInputDepthwiseKernel}: Filter@GRAD from relu(Input), Input@GRAD through the
     * convolution and then the relu (zero where Input is not positive).
     */
    public static Kernel reluInputDepthwiseGradKernel(Op op) {
        ConvGeometry.Attrs attrs = ConvGeometry.Attrs.of(op);
        return a -> {
            Tensor x = a.in("Input");
            Tensor w = a.in("Filter");
            Tensor dy = a.in("Output@GRAD");
            ConvGeometry g = geometry(attrs, x, w);
            if (a.hasOut("Input@GRAD")) {
                Tensor dx = a.outLike("Input@GRAD", x);
                DepthwiseConvolution.backwardData(g, dy.segment(), w.segment(), dx.segment());
                DepthwiseConvolution.maskByPositive(x.segment(), dx.segment(), x.numel());
            }
            if (a.hasOut("Filter@GRAD")) {
                Tensor dw = a.outLike("Filter@GRAD", w);
                DepthwiseConvolution.backwardFilter(g, x.segment(), dy.segment(), dw.segment(), true);
            }
        };
    }

    private static OpSpec.Builder convAttrs(OpSpec.Builder b) {
        return b.in("Input", "Filter").out("Output")
                .attr("strides", AttrType.INTS, new int[]{1, 1})
                .attr("paddings", AttrType.INTS, new int[]{0, 0})
                .attr("padding_algorithm", AttrType.STRING, "EXPLICIT")
                .attr("groups", AttrType.INT, 1)
                .attr("dilations", AttrType.INTS, new int[]{1, 1})
                .attr("data_format", AttrType.STRING, "NCHW");
    }

    private static void checkTypes(InferContext ctx) {
        for (String slot : new String[]{"Input", "Filter"}) {
            if (ctx.dtype(slot) != DType.F32) {
                throw ctx.fail(slot + " must be float32 (the CPU kernels are float32), is "
                        + ctx.dtype(slot).displayName());
            }
        }
        String format = ctx.op().stringAttr("data_format");
        if (!format.equals("NCHW")) {
            throw ctx.fail("data_format '" + format + "' is not supported; the CPU kernels take NCHW (transpose "
                    + "NHWC data to NCHW first)");
        }
    }

    private static void inferShape(InferContext ctx, boolean depthwise) {
        checkTypes(ctx);
        ConvGeometry g;
        try {
            g = ConvGeometry.conv(ctx.shape("Input"), ctx.shape("Filter"), ConvGeometry.Attrs.of(ctx.op()));
        } catch (IllegalArgumentException e) {
            throw ctx.fail(e.getMessage());
        }
        if (depthwise && (g.groups() != g.c() || g.f() % g.c() != 0)) {
            throw ctx.fail("depthwise_conv2d needs groups equal to Input's " + g.c() + " channels (groups is "
                    + g.groups() + ") and output channels a multiple of them (Filter has " + g.f()
                    + "); use conv2d for other groupings");
        }
        ctx.set("Output", DType.F32, g.n(), g.f(), g.oh(), g.ow());
    }

    private static void inferTransposedShape(InferContext ctx) {
        checkTypes(ctx);
        ConvGeometry g;
        try {
            g = transposedGeometry(ctx.op(), ctx.shape("Input"), ctx.shape("Filter"));
        } catch (IllegalArgumentException e) {
            throw ctx.fail(e.getMessage());
        }
        ctx.set("Output", DType.F32, g.n(), g.c(), g.h(), g.w());
    }

    private static ConvGeometry transposedGeometry(Op op, long[] x, long[] filter) {
        return ConvGeometry.transposed(x, filter, ConvGeometry.Attrs.of(op), op.attr("output_padding"),
                op.attr("output_size"));
    }

    /** The geometry of a kernel's step, from its tensors' shapes. */
    private static ConvGeometry geometry(ConvGeometry.Attrs attrs, Tensor x, Tensor filter) {
        return ConvGeometry.conv(x.shape(), filter.shape(), attrs);
    }

    /** Whether the direct depthwise loops serve this convolution (null engine: depthwise_conv2d always). */
    private static boolean depthwise(ConvGeometry g, Convolution engine) {
        return engine == null || (g.groups() > 1 && g.groups() == g.c());
    }

    /** Output = conv(Input, Filter). */
    private record Forward(ConvGeometry.Attrs attrs, Convolution engine, DirectConvolution direct) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("Input");
            Tensor w = a.in("Filter");
            ConvGeometry g = geometry(attrs, x, w);
            Tensor y = a.out("Output", DType.F32, g.n(), g.f(), g.oh(), g.ow());
            if (depthwise(g, engine)) {
                DepthwiseConvolution.forward(g, x.segment(), w.segment(), y.segment());
            } else if (DirectConvolution.servesForward(g)) {
                direct.forward(g, x.segment(), w.segment(), y.segment());
            } else {
                engine.fromImage(g, x.segment(), w.segment(), y.segment(), null, null);
            }
        }
    }

    /**
     * Input@GRAD by col2im of Filterᵀ Output@GRAD (or, for stride 1, directly as the convolution of Output@GRAD with
     * the rotated filter), Filter@GRAD by Output@GRAD im2col(Input)ᵀ.
     */
    private record Backward(ConvGeometry.Attrs attrs, Convolution engine, DirectConvolution direct) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("Input");
            Tensor w = a.in("Filter");
            Tensor dy = a.in("Output@GRAD");
            ConvGeometry g = geometry(attrs, x, w);
            Tensor dx = a.hasOut("Input@GRAD") ? a.outLike("Input@GRAD", x) : null;
            Tensor dw = a.hasOut("Filter@GRAD") ? a.outLike("Filter@GRAD", w) : null;
            if (depthwise(g, engine)) {
                if (dx != null) {
                    DepthwiseConvolution.backwardData(g, dy.segment(), w.segment(), dx.segment());
                }
                if (dw != null) {
                    DepthwiseConvolution.backwardFilter(g, x.segment(), dy.segment(), dw.segment());
                }
            } else if (dx != null && DirectConvolution.servesInputGradient(g)) {
                direct.inputGradient(g, dy.segment(), w.segment(), dx.segment());
                if (dw != null) {
                    engine.fromImage(g, x.segment(), null, null, dy.segment(), dw.segment());
                }
            } else if (dx != null) {
                engine.toImage(g, dy.segment(), w.segment(), dx.segment(), x.segment(), dw == null ? null : dw.segment());
            } else if (dw != null) {
                engine.fromImage(g, x.segment(), null, null, dy.segment(), dw.segment());
            }
        }
    }

    /** Output = the adjoint of conv2d applied to Input: col2im(Filterᵀ Input). */
    private static final class TransposedForward implements Kernel {
        private final Op op;
        private final Convolution engine;

        TransposedForward(Op op, Convolution engine) {
            this.op = op;
            this.engine = engine;
        }

        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("Input");
            Tensor w = a.in("Filter");
            ConvGeometry g = transposedGeometry(op, x.shape(), w.shape());
            Tensor out = a.out("Output", DType.F32, g.n(), g.c(), g.h(), g.w());
            engine.toImage(g, x.segment(), w.segment(), out.segment(), null, null);
        }
    }

    /** Input@GRAD = conv2d(Output@GRAD, Filter); Filter@GRAD = Input im2col(Output@GRAD)ᵀ, from the same im2col. */
    private static final class TransposedBackward implements Kernel {
        private final Op op;
        private final Convolution engine;

        TransposedBackward(Op op, Convolution engine) {
            this.op = op;
            this.engine = engine;
        }

        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("Input");
            Tensor w = a.in("Filter");
            Tensor dOut = a.in("Output@GRAD");
            ConvGeometry g = transposedGeometry(op, x.shape(), w.shape());
            Tensor dx = a.hasOut("Input@GRAD") ? a.outLike("Input@GRAD", x) : null;
            Tensor dw = a.hasOut("Filter@GRAD") ? a.outLike("Filter@GRAD", w) : null;
            if (dx != null || dw != null) {
                engine.fromImage(g, dOut.segment(), w.segment(), dx == null ? null : dx.segment(), x.segment(),
                        dw == null ? null : dw.segment());
            }
        }
    }
}
