package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * softmax and log_softmax of float tensors seen as [outer, n, inner], normalised along n, and their gradients. Along
 * the last axis (inner 1) the vectors run along each row; along another axis they run across inner, n elements apart.
 * Every row is shifted by its maximum first, so exp never overflows.
 */
final class Softmax {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final int L = S.length();
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    private Softmax() {
    }

    private static FloatVector load(MemorySegment s, long i, VectorMask<Float> m) {
        return FloatVector.fromMemorySegment(S, s, i * Float.BYTES, NATIVE, m);
    }

    private static void store(FloatVector v, MemorySegment s, long i, VectorMask<Float> m) {
        v.intoMemorySegment(s, i * Float.BYTES, NATIVE, m);
    }

    /** out = softmax(x) (or log_softmax with {@code log}) along n of [outer, n, inner]. */
    static void forward(MemorySegment x, MemorySegment out, long outer, long n, long inner, boolean log) {
        if (inner == 1) {
            for (long r = 0; r < outer; r++) {
                row(x, out, r * n, n, log);
            }
            return;
        }
        for (long o = 0; o < outer; o++) {
            long base = o * n * inner;
            for (long i = 0; i < inner; i += L) {
                VectorMask<Float> m = S.indexInRange(i, inner);
                FloatVector max = FloatVector.broadcast(S, Float.NEGATIVE_INFINITY);
                for (long j = 0; j < n; j++) {
                    max = max.max(load(x, base + j * inner + i, m));
                }
                FloatVector sum = FloatVector.zero(S);
                for (long j = 0; j < n; j++) {
                    long at = base + j * inner + i;
                    FloatVector shifted = load(x, at, m).sub(max);
                    FloatVector e = shifted.lanewise(VectorOperators.EXP);
                    sum = sum.add(e);
                    store(log ? shifted : e, out, at, m);
                }
                FloatVector scale = log ? sum.lanewise(VectorOperators.LOG) : FloatVector.broadcast(S, 1f).div(sum);
                for (long j = 0; j < n; j++) {
                    long at = base + j * inner + i;
                    FloatVector v = load(out, at, m);
                    store(log ? v.sub(scale) : v.mul(scale), out, at, m);
                }
            }
        }
    }

    /** One contiguous row of length n at {@code base}; returns the row's log-sum-exp, max + log(sum exp(x - max)). */
    static double row(MemorySegment x, MemorySegment out, long base, long n, boolean log) {
        long bound = S.loopBound(n);
        VectorMask<Float> tail = S.indexInRange(bound, n);
        FloatVector maxV = FloatVector.broadcast(S, Float.NEGATIVE_INFINITY);
        for (long j = 0; j < bound; j += L) {
            maxV = maxV.max(FloatVector.fromMemorySegment(S, x, (base + j) * Float.BYTES, NATIVE));
        }
        if (bound < n) {
            maxV = maxV.lanewise(VectorOperators.MAX, load(x, base + bound, tail), tail);
        }
        float max = maxV.reduceLanes(VectorOperators.MAX);
        FloatVector sumV = FloatVector.zero(S);
        for (long j = 0; j < bound; j += L) {
            FloatVector shifted = FloatVector.fromMemorySegment(S, x, (base + j) * Float.BYTES, NATIVE).sub(max);
            FloatVector e = shifted.lanewise(VectorOperators.EXP);
            sumV = sumV.add(e);
            (log ? shifted : e).intoMemorySegment(out, (base + j) * Float.BYTES, NATIVE);
        }
        if (bound < n) {
            FloatVector shiftedTail = load(x, base + bound, tail).sub(max);
            FloatVector eTail = shiftedTail.lanewise(VectorOperators.EXP);
            sumV = sumV.add(eTail, tail);
            store(log ? shiftedTail : eTail, out, base + bound, tail);
        }
        float sum = sumV.reduceLanes(VectorOperators.ADD);
        double logSum = Math.log(sum);
        if (log) {
            addToRow(out, base, n, (float) -logSum);
        } else {
            scaleRow(out, base, n, 1f / sum);
        }
        return max + logSum;
    }

    private static void scaleRow(MemorySegment s, long base, long n, float factor) {
        long bound = S.loopBound(n);
        for (long j = 0; j < bound; j += L) {
            FloatVector.fromMemorySegment(S, s, (base + j) * Float.BYTES, NATIVE).mul(factor)
                    .intoMemorySegment(s, (base + j) * Float.BYTES, NATIVE);
        }
        if (bound < n) {
            VectorMask<Float> m = S.indexInRange(bound, n);
            store(load(s, base + bound, m).mul(factor), s, base + bound, m);
        }
    }

    private static void addToRow(MemorySegment s, long base, long n, float shift) {
        long bound = S.loopBound(n);
        for (long j = 0; j < bound; j += L) {
            FloatVector.fromMemorySegment(S, s, (base + j) * Float.BYTES, NATIVE).add(shift)
                    .intoMemorySegment(s, (base + j) * Float.BYTES, NATIVE);
        }
        if (bound < n) {
            VectorMask<Float> m = S.indexInRange(bound, n);
            store(load(s, base + bound, m).add(shift), s, base + bound, m);
        }
    }

    /**
     * The gradient from the forward's output: gx = out (g - sum(out g)) for softmax, gx = g - exp(out) sum(g) for
     * log_softmax, along n of [outer, n, inner].
     */
    static void backward(MemorySegment out, MemorySegment g, MemorySegment gx, long outer, long n, long inner,
                         boolean log) {
        if (inner == 1) {
            for (long r = 0; r < outer; r++) {
                rowBackward(out, r * n, g, r * n, gx, r * n, n, log);
            }
            return;
        }
        for (long o = 0; o < outer; o++) {
            long base = o * n * inner;
            for (long i = 0; i < inner; i += L) {
                VectorMask<Float> m = S.indexInRange(i, inner);
                FloatVector dot = FloatVector.zero(S);
                for (long j = 0; j < n; j++) {
                    long at = base + j * inner + i;
                    dot = log ? dot.add(load(g, at, m)) : dot.add(load(out, at, m).mul(load(g, at, m)));
                }
                for (long j = 0; j < n; j++) {
                    long at = base + j * inner + i;
                    FloatVector o1 = load(out, at, m);
                    FloatVector gv = load(g, at, m);
                    store(log ? gv.sub(o1.lanewise(VectorOperators.EXP).mul(dot)) : o1.mul(gv.sub(dot)), gx, at, m);
                }
            }
        }
    }

    /** gx = out (g - sum(out g)) (or the log form) over one row of n, each operand at its own base. */
    static void rowBackward(MemorySegment out, long outBase, MemorySegment g, long gBase, MemorySegment gx, long gxBase,
                            long n, boolean log) {
        long bound = S.loopBound(n);
        VectorMask<Float> tail = S.indexInRange(bound, n);
        FloatVector dotV = FloatVector.zero(S);
        for (long j = 0; j < bound; j += L) {
            FloatVector gv = FloatVector.fromMemorySegment(S, g, (gBase + j) * Float.BYTES, NATIVE);
            dotV = log ? dotV.add(gv)
                    : dotV.add(FloatVector.fromMemorySegment(S, out, (outBase + j) * Float.BYTES, NATIVE).mul(gv));
        }
        if (bound < n) {
            FloatVector gt = load(g, gBase + bound, tail);
            dotV = log ? dotV.add(gt) : dotV.add(load(out, outBase + bound, tail).mul(gt));
        }
        float dot = dotV.reduceLanes(VectorOperators.ADD);
        for (long j = 0; j < bound; j += L) {
            FloatVector o1 = FloatVector.fromMemorySegment(S, out, (outBase + j) * Float.BYTES, NATIVE);
            FloatVector gv = FloatVector.fromMemorySegment(S, g, (gBase + j) * Float.BYTES, NATIVE);
            (log ? gv.sub(o1.lanewise(VectorOperators.EXP).mul(dot)) : o1.mul(gv.sub(dot)))
                    .intoMemorySegment(gx, (gxBase + j) * Float.BYTES, NATIVE);
        }
        if (bound < n) {
            FloatVector o1 = load(out, outBase + bound, tail);
            FloatVector gt = load(g, gBase + bound, tail);
            store(log ? gt.sub(o1.lanewise(VectorOperators.EXP).mul(dot)) : o1.mul(gt.sub(dot)), gx, gxBase + bound, tail);
        }
    }
}
