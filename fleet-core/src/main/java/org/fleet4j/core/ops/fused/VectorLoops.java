package org.fleet4j.core.ops.fused;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The inner loops of the fused kernels, written with the Vector API so one pass over memory runs at SIMD width.
 * Each performs the same float operations in the same order as the single ops of fleet-core (no fused
 * multiply-add), so fused and unfused programs agree bit for bit.
 */
final class VectorLoops {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    private VectorLoops() {
    }

    private static FloatVector load(MemorySegment s, long i) {
        return FloatVector.fromMemorySegment(S, s, i * 4, NATIVE);
    }

    private static void store(FloatVector v, MemorySegment s, long i) {
        v.intoMemorySegment(s, i * 4, NATIVE);
    }

    /** out[r, c] = max(x[r, c] + y[c], 0). */
    static void addRelu(MemorySegment x, MemorySegment y, MemorySegment out, long rows, int cols) {
        int bound = S.loopBound(cols);
        for (long r = 0; r < rows; r++) {
            long base = r * cols;
            int c = 0;
            for (; c < bound; c += S.length()) {
                store(load(x, base + c).add(load(y, c)).max(0f), out, base + c);
            }
            for (; c < cols; c++) {
                out.setAtIndex(F, base + c, Math.max(x.getAtIndex(F, base + c) + y.getAtIndex(F, c), 0f));
            }
        }
    }

    /** y = max(y, 0) in place. */
    static void reluInPlace(MemorySegment y, long n) {
        long bound = S.loopBound(n);
        long i = 0;
        for (; i < bound; i += S.length()) {
            store(load(y, i).max(0f), y, i);
        }
        for (; i < n; i++) {
            y.setAtIndex(F, i, Math.max(y.getAtIndex(F, i), 0f));
        }
    }

    /** out[r, c] = scale * (x[r, c] + y[c]) + bias. */
    static void addScale(MemorySegment x, MemorySegment y, MemorySegment out, long rows, int cols, float scale, float bias) {
        int bound = S.loopBound(cols);
        for (long r = 0; r < rows; r++) {
            long base = r * cols;
            int c = 0;
            for (; c < bound; c += S.length()) {
                store(load(x, base + c).add(load(y, c)).mul(scale).add(bias), out, base + c);
            }
            for (; c < cols; c++) {
                out.setAtIndex(F, base + c, scale * (x.getAtIndex(F, base + c) + y.getAtIndex(F, c)) + bias);
            }
        }
    }

    /** The activation's gradient from its output and the output's gradient. */
    enum ActGrad {
        RELU, SIGMOID, TANH, SCALE;

        FloatVector apply(FloatVector o, FloatVector g, float scale) {
            return switch (this) {
                case RELU -> g.blend(0f, o.compare(VectorOperators.GT, 0f).not());
                case SIGMOID -> g.mul(o).mul(o.neg().add(1f));
                case TANH -> g.mul(o.mul(o).neg().add(1f));
                case SCALE -> g.mul(scale);
            };
        }

        float apply(float o, float g, float scale) {
            return switch (this) {
                case RELU -> o > 0f ? g : 0f;
                case SIGMOID -> g * o * (1f - o);
                case TANH -> g * (1f - o * o);
                case SCALE -> g * scale;
            };
        }
    }

    /**
     * d = act'(out) * g; gx = d (when gx is not null); gy[c] = sum over rows of d (when gy is not null), accumulated
     * row by row as fleet-core's sumRows does.
     */
    static void addActGrad(ActGrad act, float scale, MemorySegment out, MemorySegment g, MemorySegment gx, float[] gy,
                           long rows, int cols) {
        int bound = S.loopBound(cols);
        for (long r = 0; r < rows; r++) {
            long base = r * cols;
            int c = 0;
            for (; c < bound; c += S.length()) {
                FloatVector d = act.apply(load(out, base + c), load(g, base + c), scale);
                if (gx != null) {
                    store(d, gx, base + c);
                }
                if (gy != null) {
                    FloatVector.fromArray(S, gy, c).add(d).intoArray(gy, c);
                }
            }
            for (; c < cols; c++) {
                float d = act.apply(out.getAtIndex(F, base + c), g.getAtIndex(F, base + c), scale);
                if (gx != null) {
                    gx.setAtIndex(F, base + c, d);
                }
                if (gy != null) {
                    gy[c] += d;
                }
            }
        }
    }

    /** gv = g + wd p; v = mu v + gv; p = p - lr (nesterov ? gv + mu v : v). */
    static void momentum(MemorySegment p, MemorySegment v, MemorySegment g, long n, float lr, float mu, boolean nesterov,
                         float wd) {
        long bound = S.loopBound(n);
        long i = 0;
        for (; i < bound; i += S.length()) {
            FloatVector pv = load(p, i);
            FloatVector gv = load(g, i).add(pv.mul(wd));
            FloatVector vv = load(v, i).mul(mu).add(gv);
            store(vv, v, i);
            store(pv.sub((nesterov ? gv.add(vv.mul(mu)) : vv).mul(lr)), p, i);
        }
        for (; i < n; i++) {
            float pv = p.getAtIndex(F, i);
            float gv = g.getAtIndex(F, i) + wd * pv;
            float vv = mu * v.getAtIndex(F, i) + gv;
            v.setAtIndex(F, i, vv);
            p.setAtIndex(F, i, pv - lr * (nesterov ? gv + mu * vv : vv));
        }
    }

    /** Adam's moments and step with the bias correction folded into lrT and epsT; decay is AdamW's 1 - lr coeff. */
    static void adam(MemorySegment p, MemorySegment m1, MemorySegment m2, MemorySegment g, long n, float beta1, float beta2,
                     float lrT, float epsT, float decay) {
        float c1 = 1 - beta1;
        float c2 = 1 - beta2;
        long bound = S.loopBound(n);
        long i = 0;
        for (; i < bound; i += S.length()) {
            FloatVector gv = load(g, i);
            FloatVector a1 = load(m1, i).mul(beta1).add(gv.mul(c1));
            FloatVector a2 = load(m2, i).mul(beta2).add(gv.mul(c2).mul(gv));
            store(a1, m1, i);
            store(a2, m2, i);
            FloatVector pv = load(p, i).mul(decay);
            store(pv.sub(a1.mul(lrT).div(a2.lanewise(VectorOperators.SQRT).add(epsT))), p, i);
        }
        for (; i < n; i++) {
            float gv = g.getAtIndex(F, i);
            float a1 = beta1 * m1.getAtIndex(F, i) + c1 * gv;
            float a2 = beta2 * m2.getAtIndex(F, i) + c2 * gv * gv;
            m1.setAtIndex(F, i, a1);
            m2.setAtIndex(F, i, a2);
            float pv = p.getAtIndex(F, i) * decay;
            p.setAtIndex(F, i, pv - lrT * a1 / ((float) Math.sqrt(a2) + epsT));
        }
    }
}
