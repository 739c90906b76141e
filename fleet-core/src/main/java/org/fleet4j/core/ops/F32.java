package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;
import org.fleet4j.core.tensor.BFloat16;

/**
 * Float loops over off-heap storage, shared by the kernels. The elementwise ones are written with the Vector API:
 * C2 does not vectorise plain loops that read one memory segment and write another (it cannot rule out that they
 * overlap), and a scalar pass over a 64 x 512 activation costs about four times a vector one. Every loop performs
 * the same float operations in the same order as its scalar tail (no fused multiply-add), so results do not
 * depend on the vector width.
 */
public final class F32 {
    static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final int L = S.length();
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED;
    /** Half the width of {@link #I}: as many bfloat16 lanes as I has int lanes. */
    private static final VectorSpecies<Short> H = VectorSpecies.of(short.class, VectorShape.forBitSize(I.vectorBitSize() / 2));
    private static final ValueLayout.OfShort BF = ValueLayout.JAVA_SHORT_UNALIGNED;

    private F32() {
    }

    public static float get(MemorySegment s, long i) {
        return s.getAtIndex(F, i);
    }

    public static void set(MemorySegment s, long i, float v) {
        s.setAtIndex(F, i, v);
    }

    private static FloatVector load(MemorySegment s, long i) {
        return FloatVector.fromMemorySegment(S, s, i * Float.BYTES, NATIVE);
    }

    private static void store(FloatVector v, MemorySegment s, long i) {
        v.intoMemorySegment(s, i * Float.BYTES, NATIVE);
    }

    /** out = a + b. */
    public static void add(MemorySegment a, MemorySegment b, MemorySegment out, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            store(load(a, i).add(load(b, i)), out, i);
        }
        for (; i < n; i++) {
            out.setAtIndex(F, i, a.getAtIndex(F, i) + b.getAtIndex(F, i));
        }
    }

    /** out = a - b. */
    public static void sub(MemorySegment a, MemorySegment b, MemorySegment out, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            store(load(a, i).sub(load(b, i)), out, i);
        }
        for (; i < n; i++) {
            out.setAtIndex(F, i, a.getAtIndex(F, i) - b.getAtIndex(F, i));
        }
    }

    /** out = a * b. */
    public static void mul(MemorySegment a, MemorySegment b, MemorySegment out, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            store(load(a, i).mul(load(b, i)), out, i);
        }
        for (; i < n; i++) {
            out.setAtIndex(F, i, a.getAtIndex(F, i) * b.getAtIndex(F, i));
        }
    }

    /** out = a / b. */
    public static void div(MemorySegment a, MemorySegment b, MemorySegment out, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            store(load(a, i).div(load(b, i)), out, i);
        }
        for (; i < n; i++) {
            out.setAtIndex(F, i, a.getAtIndex(F, i) / b.getAtIndex(F, i));
        }
    }

    /** gy = -(g * out) / y: the gradient of out = x / y with respect to y, from the forward's output. */
    public static void divGradY(MemorySegment g, MemorySegment out, MemorySegment y, MemorySegment gy, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            store(load(g, i).mul(load(out, i)).div(load(y, i)).neg(), gy, i);
        }
        for (; i < n; i++) {
            gy.setAtIndex(F, i, -(g.getAtIndex(F, i) * out.getAtIndex(F, i) / y.getAtIndex(F, i)));
        }
    }

    /** out += a. */
    public static void accumulate(MemorySegment out, MemorySegment a, long n) {
        add(out, a, out, n);
    }

    /** out = alpha * a. */
    public static void scale(MemorySegment a, float alpha, MemorySegment out, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            store(load(a, i).mul(alpha), out, i);
        }
        for (; i < n; i++) {
            out.setAtIndex(F, i, alpha * a.getAtIndex(F, i));
        }
    }

    /** out = alpha * a + beta. */
    public static void scaleShift(MemorySegment a, float alpha, float beta, MemorySegment out, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            store(load(a, i).mul(alpha).add(beta), out, i);
        }
        for (; i < n; i++) {
            out.setAtIndex(F, i, alpha * a.getAtIndex(F, i) + beta);
        }
    }

    /** y += alpha * x. */
    public static void axpy(float alpha, MemorySegment x, MemorySegment y, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            store(load(y, i).add(load(x, i).mul(alpha)), y, i);
        }
        for (; i < n; i++) {
            y.setAtIndex(F, i, y.getAtIndex(F, i) + alpha * x.getAtIndex(F, i));
        }
    }

    /** p = p - lr * (g + wd * p): the SGD step with L2 weight decay, in place. */
    public static void sgd(MemorySegment p, MemorySegment g, float lr, float wd, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            FloatVector pv = load(p, i);
            store(pv.sub(load(g, i).add(pv.mul(wd)).mul(lr)), p, i);
        }
        for (; i < n; i++) {
            float pv = p.getAtIndex(F, i);
            p.setAtIndex(F, i, pv - lr * (g.getAtIndex(F, i) + wd * pv));
        }
    }

    /** out = max(x, 0) (Math.max: NaN stays NaN). */
    public static void relu(MemorySegment x, MemorySegment out, long n) {
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            store(load(x, i).max(0f), out, i);
        }
        for (; i < n; i++) {
            out.setAtIndex(F, i, Math.max(x.getAtIndex(F, i), 0f));
        }
    }

    /** gx = out > 0 ? g : 0, from relu's output. */
    public static void reluGrad(MemorySegment out, MemorySegment g, MemorySegment gx, long n) {
        FloatVector zero = FloatVector.zero(S);
        long i = 0;
        for (long bound = S.loopBound(n); i < bound; i += L) {
            store(zero.blend(load(g, i), load(out, i).compare(VectorOperators.GT, 0f)), gx, i);
        }
        for (; i < n; i++) {
            gx.setAtIndex(F, i, out.getAtIndex(F, i) > 0f ? g.getAtIndex(F, i) : 0f);
        }
    }

    /**
     * The sum in double, over four interleaved partial sums (element i goes to partial i mod 4) so that consecutive
     * additions do not wait on each other; the order is fixed, so the result does not depend on the machine.
     */
    public static double sum(MemorySegment a, long n) {
        double s0 = 0;
        double s1 = 0;
        double s2 = 0;
        double s3 = 0;
        long i = 0;
        for (; i + 4 <= n; i += 4) {
            s0 += a.getAtIndex(F, i);
            s1 += a.getAtIndex(F, i + 1);
            s2 += a.getAtIndex(F, i + 2);
            s3 += a.getAtIndex(F, i + 3);
        }
        for (; i < n; i++) {
            s0 += a.getAtIndex(F, i);
        }
        return (s0 + s1) + (s2 + s3);
    }

    /**
     * dst[i] = src[i] rounded to bfloat16 (nearest even; NaN stays a quiet NaN), bit for bit what
     * {@link BFloat16#fromFloat} gives, a vector of lanes at a time.
     */
    public static void toBf16(MemorySegment src, MemorySegment dst, long n) {
        long bound = I.loopBound(n);
        long i = 0;
        for (; i < bound; i += I.length()) {
            IntVector bits = IntVector.fromMemorySegment(I, src, i * Float.BYTES, NATIVE);
            IntVector high = bits.lanewise(VectorOperators.LSHR, 16);
            IntVector rounded = bits.add(high.and(1).add(0x7fff)).lanewise(VectorOperators.LSHR, 16);
            VectorMask<Integer> nan = bits.and(0x7fffffff).compare(VectorOperators.GT, 0x7f800000);
            IntVector result = rounded.blend(high.or(0x0040), nan);
            result.convertShape(VectorOperators.I2S, H, 0).intoMemorySegment(dst, i * Short.BYTES, NATIVE);
        }
        for (; i < n; i++) {
            dst.setAtIndex(BF, i, BFloat16.fromFloat(src.getAtIndex(F, i)));
        }
    }

    /** dst[i] = the bfloat16 src[i] widened to float (exact), a vector of lanes at a time. */
    public static void fromBf16(MemorySegment src, MemorySegment dst, long n) {
        long bound = I.loopBound(n);
        long i = 0;
        for (; i < bound; i += I.length()) {
            ShortVector b = ShortVector.fromMemorySegment(H, src, i * Short.BYTES, NATIVE);
            IntVector bits = ((IntVector) b.convertShape(VectorOperators.S2I, I, 0)).lanewise(VectorOperators.LSHL, 16);
            bits.reinterpretAsFloats().intoMemorySegment(dst, i * Float.BYTES, NATIVE);
        }
        for (; i < n; i++) {
            dst.setAtIndex(F, i, BFloat16.toFloat(src.getAtIndex(BF, i)));
        }
    }

    public static void copy(MemorySegment src, MemorySegment dst, long n) {
        MemorySegment.copy(src, 0, dst, 0, n * 4);
    }

    /** out[r, c] = x[r, c] + y[c] for rows of length cols. */
    public static void addRows(MemorySegment x, MemorySegment y, MemorySegment out, long rows, long cols) {
        long bound = S.loopBound(cols);
        for (long r = 0; r < rows; r++) {
            long base = r * cols;
            long c = 0;
            for (; c < bound; c += L) {
                store(load(x, base + c).add(load(y, c)), out, base + c);
            }
            for (; c < cols; c++) {
                out.setAtIndex(F, base + c, x.getAtIndex(F, base + c) + y.getAtIndex(F, c));
            }
        }
    }

    /**
     * out[c] = sum over rows of g[r, c], each column summed from row 0 down in float. Rows outer, columns inner,
     * like addRows: a call makes rows x cols / L loop iterations, enough for C2 to compile it within a few steps
     * (column strips summed in registers took four times as many calls, and the Vector API runs at a small
     * fraction of its speed until C2 compiles it).
     */
    public static void sumRows(MemorySegment g, MemorySegment out, long rows, long cols) {
        out.asSlice(0, cols * Float.BYTES).fill((byte) 0);
        long bound = S.loopBound(cols);
        for (long r = 0; r < rows; r++) {
            long base = r * cols;
            long c = 0;
            for (; c < bound; c += L) {
                store(load(out, c).add(load(g, base + c)), out, c);
            }
            for (; c < cols; c++) {
                out.setAtIndex(F, c, out.getAtIndex(F, c) + g.getAtIndex(F, base + c));
            }
        }
    }
}
