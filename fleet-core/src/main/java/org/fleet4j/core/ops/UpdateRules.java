package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;

/**
 * The arithmetic of each optimizer's update over a range of float elements, in place. The worker's optimizer ops and
 * the parameter servers' tables both call these, so a server-side update gives the same bits as the op on the same
 * gradient.
 */
public final class UpdateRules {
    private UpdateRules() {
    }

    /** p -= lr * (g + wd * p) over elements [0, n) of p and g. */
    public static void sgd(MemorySegment p, MemorySegment g, float lr, float wd, long n) {
        F32.sgd(p, g, lr, wd, n);
    }

    /** v = mu v + (g + wd p); p -= lr v, or p -= lr (g' + mu v) with Nesterov; elements [0, n). */
    public static void momentum(MemorySegment p, MemorySegment v, MemorySegment g, long n, float lr, float mu,
                                boolean nesterov, float wd) {
        for (long i = 0; i < n; i++) {
            float pv = F32.get(p, i);
            float gv = F32.get(g, i) + wd * pv;
            float vv = mu * F32.get(v, i) + gv;
            F32.set(v, i, vv);
            F32.set(p, i, pv - lr * (nesterov ? gv + mu * vv : vv));
        }
    }

    /** Paddle's adagrad: m += g * g; p -= lr g / (sqrt(m) + eps); elements [0, n). */
    public static void adagrad(MemorySegment p, MemorySegment m, MemorySegment g, long n, float lr, float eps) {
        for (long i = 0; i < n; i++) {
            float gv = F32.get(g, i);
            float mv = F32.get(m, i) + gv * gv;
            F32.set(m, i, mv);
            F32.set(p, i, F32.get(p, i) - lr * gv / ((float) Math.sqrt(mv) + eps));
        }
    }

    /** Adam's step size with the bias correction folded in, as Paddle computes it from the beta powers. */
    public static float adamStep(float lr, float beta1Pow, float beta2Pow) {
        return (float) (lr * Math.sqrt(1 - beta2Pow) / (1 - beta1Pow));
    }

    /** Adam's epsilon scaled like the step size. */
    public static float adamEpsilon(float eps, float beta2Pow) {
        return (float) (eps * Math.sqrt(1 - beta2Pow));
    }

    /**
     * Adam over elements [from, from + n): the moments move toward g and g squared, p *= 1 - lr coeff (AdamW's
     * decoupled decay; 0 for Adam), then p -= lrT m1 / (sqrt(m2) + epsT) with lrT and epsT from
     * {@link #adamStep} and {@link #adamEpsilon}.
     */
    public static void adam(MemorySegment p, MemorySegment m1, MemorySegment m2, MemorySegment g, long from, long n,
                            float lr, float lrT, float epsT, float beta1, float beta2, float coeff) {
        float decay = 1f - lr * coeff;
        for (long i = from; i < from + n; i++) {
            float gv = F32.get(g, i);
            float a1 = beta1 * F32.get(m1, i) + (1 - beta1) * gv;
            float a2 = beta2 * F32.get(m2, i) + (1 - beta2) * gv * gv;
            F32.set(m1, i, a1);
            F32.set(m2, i, a2);
            float pv = F32.get(p, i) * decay;
            F32.set(p, i, pv - lrT * a1 / ((float) Math.sqrt(a2) + epsT));
        }
    }
}
