package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.Tensor;

/**
 * relu, sigmoid, tanh, gelu (exact, or its tanh form with approximate), silu, leaky_relu, hard_swish and scale, unary
 * float ops with their gradients; and sign, which has none (L1Decay applies it to parameters after backward).
 */
@AutoService(OpLibrary.class)
public final class ActivationOps implements OpLibrary {
    public static final String RELU = "relu";
    public static final String SIGMOID = "sigmoid";
    public static final String TANH = "tanh";
    public static final String GELU = "gelu";
    public static final String SCALE = "scale";
    public static final String SIGN = "sign";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        unary(specs, RELU, F32::relu, (x, out, g, gx, n) -> F32.reluGrad(out, g, gx, n));
        unary(specs, SIGMOID, ActivationOps::sigmoid, ActivationOps::sigmoidGrad);
        unary(specs, TANH, ActivationOps::tanh, ActivationOps::tanhGrad);
        specs.add(vectorised(GELU, op -> op.boolAttr("approximate") ? Activations.Fn.GELU_TANH : Activations.Fn.GELU,
                op -> Activations.Params.NONE)
                .attr("approximate", AttrType.BOOL, false)
                .build());
        specs.add(vectorised("silu", op -> Activations.Fn.SILU, op -> Activations.Params.NONE).build());
        specs.add(vectorised("leaky_relu", op -> Activations.Fn.LEAKY_RELU,
                op -> new Activations.Params(op.floatAttr("alpha"), 0, 1, 0))
                .attr("alpha", AttrType.FLOAT, 0.02f)
                .build());
        // Paddle's hard_swish: x * min(max(x + offset, 0), threshold) / scale
        specs.add(vectorised("hard_swish", op -> Activations.Fn.HARD_SWISH,
                op -> new Activations.Params(0, op.floatAttr("threshold"), op.floatAttr("scale"), op.floatAttr("offset")))
                .attr("threshold", AttrType.FLOAT, 6f)
                .attr("scale", AttrType.FLOAT, 6f)
                .attr("offset", AttrType.FLOAT, 3f)
                .build());
        specs.add(OpSpec.builder(SCALE)
                .in("X").out("Out")
                .attr("scale", AttrType.FLOAT, 1.0f)
                .attr("bias", AttrType.FLOAT, 0.0f)
                .attr("bias_after_scale", AttrType.BOOL, true)
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> {
                    float s = op.floatAttr("scale");
                    float b = op.boolAttr("bias_after_scale") ? op.floatAttr("bias") : op.floatAttr("bias") * s;
                    return a -> {
                        Tensor x = a.in("X");
                        Tensor out = a.outLike("Out", x);
                        for (long i = 0; i < x.numel(); i++) {
                            out.setDouble(i, s * x.getDouble(i) + b);
                        }
                    };
                })
                .gradKernel(op -> {
                    float s = op.floatAttr("scale");
                    return a -> {
                        Tensor g = a.in("Out@GRAD");
                        Tensor gx = a.outLike("X@GRAD", g);
                        F32.scale(g.segment(), s, gx.segment(), g.numel());
                    };
                })
                .build());
        specs.add(OpSpec.builder(SIGN)
                .in("X").out("Out")
                .shape(ActivationOps::sameAsFloatX)
                .kernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor out = a.outLike("Out", x);
                    for (long i = 0; i < x.numel(); i++) {
                        out.setDouble(i, Math.signum(x.getDouble(i)));
                    }
                })
                .build());
        return specs;
    }

    /** Forward: out = f(x). */
    interface Fn {
        void apply(MemorySegment x, MemorySegment out, long n);
    }

    /** Backward: gx = f'(x, out) * g. */
    interface GradFn {
        void apply(MemorySegment x, MemorySegment out, MemorySegment g, MemorySegment gx, long n);
    }

    /** The shape function of a float op whose Out is X's shape and type. */
    private static void sameAsFloatX(InferContext ctx) {
        ctx.requireFloat("X");
        ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
    }

    /** A unary op whose kernels are {@link Activations}' loops, the function and its parameters read from the op. */
    private static OpSpec.Builder vectorised(String type, java.util.function.Function<Op, Activations.Fn> fn,
                                             java.util.function.Function<Op, Activations.Params> params) {
        return OpSpec.builder(type)
                .in("X").out("Out")
                .shape(ActivationOps::sameAsFloatX)
                .kernel(op -> {
                    Activations.Fn f = fn.apply(op);
                    Activations.Params p = params.apply(op);
                    return a -> {
                        Tensor x = a.in("X");
                        Activations.forward(f, p, x.segment(), a.outLike("Out", x).segment(), x.numel());
                    };
                })
                .gradKernel(op -> {
                    Activations.Fn f = fn.apply(op);
                    Activations.Params p = params.apply(op);
                    return a -> {
                        Tensor x = a.in("X");
                        Tensor gx = a.outLike("X@GRAD", x);
                        Activations.backward(f, p, x.segment(), a.in("Out@GRAD").segment(), gx.segment(), x.numel());
                    };
                });
    }

    private static void unary(List<OpSpec> specs, String type, Fn fn, GradFn grad) {
        specs.add(OpSpec.builder(type)
                .in("X").out("Out")
                .shape(ActivationOps::sameAsFloatX)
                .kernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor out = a.outLike("Out", x);
                    fn.apply(x.segment(), out.segment(), x.numel());
                })
                .gradKernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor gx = a.outLike("X@GRAD", x);
                    grad.apply(x.segment(), a.in("Out").segment(), a.in("Out@GRAD").segment(), gx.segment(), x.numel());
                })
                .build());
    }

    static void sigmoid(MemorySegment x, MemorySegment out, long n) {
        for (long i = 0; i < n; i++) {
            out.setAtIndex(F32.F, i, (float) (1.0 / (1.0 + Math.exp(-x.getAtIndex(F32.F, i)))));
        }
    }

    static void sigmoidGrad(MemorySegment x, MemorySegment out, MemorySegment g, MemorySegment gx, long n) {
        for (long i = 0; i < n; i++) {
            float o = out.getAtIndex(F32.F, i);
            gx.setAtIndex(F32.F, i, g.getAtIndex(F32.F, i) * o * (1f - o));
        }
    }

    static void tanh(MemorySegment x, MemorySegment out, long n) {
        for (long i = 0; i < n; i++) {
            out.setAtIndex(F32.F, i, (float) Math.tanh(x.getAtIndex(F32.F, i)));
        }
    }

    static void tanhGrad(MemorySegment x, MemorySegment out, MemorySegment g, MemorySegment gx, long n) {
        for (long i = 0; i < n; i++) {
            float o = out.getAtIndex(F32.F, i);
            gx.setAtIndex(F32.F, i, g.getAtIndex(F32.F, i) * (1f - o * o));
        }
    }
}
