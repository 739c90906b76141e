package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Float loops over off-heap storage that the JIT vectorises; shared by the kernels. */
public final class F32 {
    static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;

    private F32() {
    }

    public static float get(MemorySegment s, long i) {
        return s.getAtIndex(F, i);
    }

    public static void set(MemorySegment s, long i, float v) {
        s.setAtIndex(F, i, v);
    }

    public static void add(MemorySegment a, MemorySegment b, MemorySegment out, long n) {
        for (long i = 0; i < n; i++) {
            out.setAtIndex(F, i, a.getAtIndex(F, i) + b.getAtIndex(F, i));
        }
    }

    /** out += a. */
    public static void accumulate(MemorySegment out, MemorySegment a, long n) {
        for (long i = 0; i < n; i++) {
            out.setAtIndex(F, i, out.getAtIndex(F, i) + a.getAtIndex(F, i));
        }
    }

    /** out = alpha * a. */
    public static void scale(MemorySegment a, float alpha, MemorySegment out, long n) {
        for (long i = 0; i < n; i++) {
            out.setAtIndex(F, i, alpha * a.getAtIndex(F, i));
        }
    }

    /** y += alpha * x. */
    public static void axpy(float alpha, MemorySegment x, MemorySegment y, long n) {
        for (long i = 0; i < n; i++) {
            y.setAtIndex(F, i, y.getAtIndex(F, i) + alpha * x.getAtIndex(F, i));
        }
    }

    public static double sum(MemorySegment a, long n) {
        double s = 0;
        for (long i = 0; i < n; i++) {
            s += a.getAtIndex(F, i);
        }
        return s;
    }

    public static void copy(MemorySegment src, MemorySegment dst, long n) {
        MemorySegment.copy(src, 0, dst, 0, n * 4);
    }

    /** out[r, c] = x[r, c] + y[c] for rows of length cols. */
    public static void addRows(MemorySegment x, MemorySegment y, MemorySegment out, long rows, long cols) {
        for (long r = 0; r < rows; r++) {
            long base = r * cols;
            for (long c = 0; c < cols; c++) {
                out.setAtIndex(F, base + c, x.getAtIndex(F, base + c) + y.getAtIndex(F, c));
            }
        }
    }

    /** out[c] = sum over rows of g[r, c]. */
    public static void sumRows(MemorySegment g, MemorySegment out, long rows, long cols) {
        out.asSlice(0, cols * 4).fill((byte) 0);
        for (long r = 0; r < rows; r++) {
            long base = r * cols;
            for (long c = 0; c < cols; c++) {
                out.setAtIndex(F, c, out.getAtIndex(F, c) + g.getAtIndex(F, base + c));
            }
        }
    }
}
