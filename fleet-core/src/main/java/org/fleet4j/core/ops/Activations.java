package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The vectorised float loops of gelu (exact and tanh forms), silu, leaky_relu and hard_swish, forward and backward.
 * Each function is one method on a vector, used by the full-width loop and by one masked pass over the tail, so every
 * element goes through the same operations whatever the vector width (fused multiply-adds included).
 */
final class Activations {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final int L = S.length();
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();
    private static final FloatVector ONE = FloatVector.broadcast(S, 1f);

    private static final float INV_SQRT2 = (float) (1 / Math.sqrt(2));
    private static final float INV_SQRT_2PI = (float) (1 / Math.sqrt(2 * Math.PI));
    private static final float SQRT_2_OVER_PI = (float) Math.sqrt(2 / Math.PI);
    private static final float TANH_CUBIC = 0.044715f;
    /** erfcx(u) ~ t P(t), t = 1 / (1 + u / 2), for u >= 0; relative error 1e-8 (scripts/kernels/fit_erfcx.py). */
    private static final float[] ERFCX = {2.820863116e-01f, 2.823040564e-01f, 2.446593455e-01f, 1.885637944e-01f,
        4.419764975e-02f, 6.075435941e-02f, -6.225931398e-02f, -2.471074266e-01f, 3.529248194e-01f,
        -1.800278339e-01f, 3.390424087e-02f};

    private Activations() {
    }

    /** The unary functions, each Out = f(X). */
    enum Fn { GELU, GELU_TANH, SILU, LEAKY_RELU, HARD_SWISH }

    /** Attributes of the parametrised functions: leaky_relu's alpha; hard_swish's threshold, scale and offset. */
    record Params(float alpha, float threshold, float scale, float offset) {
        static final Params NONE = new Params(0, 0, 1, 0);
    }

    private static FloatVector load(MemorySegment s, long i) {
        return FloatVector.fromMemorySegment(S, s, i * Float.BYTES, NATIVE);
    }

    private static FloatVector load(MemorySegment s, long i, VectorMask<Float> m) {
        return FloatVector.fromMemorySegment(S, s, i * Float.BYTES, NATIVE, m);
    }

    /** out = f(x) over n elements. */
    static void forward(Fn fn, Params p, MemorySegment x, MemorySegment out, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            value(fn, p, load(x, i)).intoMemorySegment(out, i * Float.BYTES, NATIVE);
        }
        if (i < n) {
            VectorMask<Float> m = S.indexInRange(i, n);
            value(fn, p, load(x, i, m)).intoMemorySegment(out, i * Float.BYTES, NATIVE, m);
        }
    }

    /** gx = f'(x) * g over n elements. */
    static void backward(Fn fn, Params p, MemorySegment x, MemorySegment g, MemorySegment gx, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            derivative(fn, p, load(x, i)).mul(load(g, i)).intoMemorySegment(gx, i * Float.BYTES, NATIVE);
        }
        if (i < n) {
            VectorMask<Float> m = S.indexInRange(i, n);
            derivative(fn, p, load(x, i, m)).mul(load(g, i, m)).intoMemorySegment(gx, i * Float.BYTES, NATIVE, m);
        }
    }

    private static FloatVector value(Fn fn, Params p, FloatVector x) {
        return switch (fn) {
            case GELU -> x.mul(normalCdf(x, gaussian(x)));
            case GELU_TANH -> x.mul(0.5f).mul(tanhInner(x).lanewise(VectorOperators.TANH).add(1f));
            case SILU -> x.div(x.neg().lanewise(VectorOperators.EXP).add(1f));
            case LEAKY_RELU -> x.blend(x.mul(p.alpha()), x.compare(VectorOperators.LT, 0f));
            case HARD_SWISH -> x.mul(x.add(p.offset()).max(0f).min(p.threshold())).div(p.scale());
        };
    }

    private static FloatVector derivative(Fn fn, Params p, FloatVector x) {
        return switch (fn) {
            // d/dx x Phi(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi), one exp for both
            case GELU -> {
                FloatVector g = gaussian(x);
                yield normalCdf(x, g).add(x.mul(g).mul(INV_SQRT_2PI));
            }
            case GELU_TANH -> {
                FloatVector th = tanhInner(x).lanewise(VectorOperators.TANH);
                FloatVector inner = x.mul(x).mul(3 * TANH_CUBIC).add(1f).mul(SQRT_2_OVER_PI);
                yield th.add(1f).mul(0.5f).add(x.mul(0.5f).mul(th.mul(th).neg().add(1f)).mul(inner));
            }
            case SILU -> {
                FloatVector s = ONE.div(x.neg().lanewise(VectorOperators.EXP).add(1f));
                yield s.mul(x.mul(s.neg().add(1f)).add(1f));
            }
            case LEAKY_RELU -> FloatVector.broadcast(S, 1f).blend(FloatVector.broadcast(S, p.alpha()),
                    x.compare(VectorOperators.LT, 0f));
            case HARD_SWISH -> {
                FloatVector shifted = x.add(p.offset());
                FloatVector middle = x.mul(2f).add(p.offset()).div(p.scale());
                yield middle.blend(FloatVector.zero(S), shifted.compare(VectorOperators.LE, 0f))
                        .blend(FloatVector.broadcast(S, 1f), shifted.compare(VectorOperators.GE, p.threshold()));
            }
        };
    }

    /** sqrt(2 / pi) (x + 0.044715 x^3): the argument of tanh in GELU's tanh form. */
    private static FloatVector tanhInner(FloatVector x) {
        return x.mul(x).mul(TANH_CUBIC).add(1f).mul(x).mul(SQRT_2_OVER_PI);
    }

    /** Coefficient k of the erfcx polynomial in every lane. */
    private static FloatVector c(int k) {
        return FloatVector.broadcast(S, ERFCX[k]);
    }

    /** exp(-x^2 / 2). */
    private static FloatVector gaussian(FloatVector x) {
        return x.mul(x).mul(-0.5f).lanewise(VectorOperators.EXP);
    }

    /**
     * Phi(x) = erfc(-x / sqrt 2) / 2 from e = exp(-x^2 / 2) erfcx(|x| / sqrt 2) / 2: e itself for x < 0 and 1 - e
     * otherwise, so the left tail keeps its relative precision (1 + erf(x) would cancel); {@code gaussian} is
     * exp(-x^2 / 2), which the gradient shares. The polynomial is evaluated with fused multiply-adds: every lane, the
     * tail's included, takes the same operations.
     */
    private static FloatVector normalCdf(FloatVector x, FloatVector gaussian) {
        FloatVector u = x.abs().mul(INV_SQRT2);
        FloatVector t = ONE.div(u.mul(0.5f).add(1f));
        // Horner written out: a loop would carry the vector through a phi, which C2 may box
        FloatVector poly = t.fma(ERFCX[10], ERFCX[9]);
        poly = poly.fma(t, c(8)).fma(t, c(7)).fma(t, c(6)).fma(t, c(5)).fma(t, c(4)).fma(t, c(3)).fma(t, c(2))
                .fma(t, c(1)).fma(t, c(0));
        FloatVector e = gaussian.mul(t).mul(poly).mul(0.5f);
        return e.neg().add(1f).blend(e, x.compare(VectorOperators.LT, 0f));
    }
}
