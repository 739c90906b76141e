package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Tensor;

/**
 * relu, sigmoid, tanh, gelu (exact, with erf) and scale, unary float ops with their gradients; and sign, which has
 * none (L1Decay applies it to parameters after backward).
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
        unary(specs, GELU, ActivationOps::gelu, ActivationOps::geluGrad);
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

    private static final double INV_SQRT2 = 1.0 / Math.sqrt(2.0);
    private static final double INV_SQRT_2PI = 1.0 / Math.sqrt(2.0 * Math.PI);

    static void gelu(MemorySegment x, MemorySegment out, long n) {
        for (long i = 0; i < n; i++) {
            double v = x.getAtIndex(F32.F, i);
            out.setAtIndex(F32.F, i, (float) (0.5 * v * (1.0 + Erf.erf(v * INV_SQRT2))));
        }
    }

    static void geluGrad(MemorySegment x, MemorySegment out, MemorySegment g, MemorySegment gx, long n) {
        for (long i = 0; i < n; i++) {
            double v = x.getAtIndex(F32.F, i);
            double cdf = 0.5 * (1.0 + Erf.erf(v * INV_SQRT2));
            double pdf = Math.exp(-0.5 * v * v) * INV_SQRT_2PI;
            gx.setAtIndex(F32.F, i, (float) (g.getAtIndex(F32.F, i) * (cdf + v * pdf)));
        }
    }
}
