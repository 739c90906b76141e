package org.fleet4j.core.tensor;

import java.util.Arrays;

/** Small helpers over shapes written as long[]; -1 marks a dimension unknown until run time (the batch). */
public final class Shapes {
    private Shapes() {
    }

    public static long numel(long[] shape) {
        long n = 1;
        for (long d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("shape " + str(shape) + " has an unknown dimension");
            }
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    /** The number of elements, or -1 when a dimension is known only at run time (-1 in the shape). */
    public static long knownNumel(long[] shape) {
        for (long d : shape) {
            if (d < 0) {
                return -1;
            }
        }
        return numel(shape);
    }

    public static String str(long[] shape) {
        return Arrays.toString(shape);
    }

    /** Row-major strides, in elements. */
    public static long[] strides(long[] shape) {
        long[] s = new long[shape.length];
        long acc = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            s[i] = acc;
            acc *= shape[i];
        }
        return s;
    }

    /**
     * Resolves a reshape target against a concrete element count: one -1 is inferred, 0 copies the input's
     * dimension at the same position (Paddle's convention).
     */
    public static long[] resolveReshape(long[] from, long[] to) {
        long[] out = to.clone();
        int infer = -1;
        long known = 1;
        for (int i = 0; i < out.length; i++) {
            if (out[i] == 0 && i < from.length) {
                out[i] = from[i];
            }
            if (out[i] == -1) {
                if (infer >= 0) {
                    throw new IllegalArgumentException("reshape target " + str(to) + " has more than one -1");
                }
                infer = i;
            } else {
                known *= out[i];
            }
        }
        long total = numel(from);
        if (infer >= 0) {
            if (known == 0 || total % known != 0) {
                throw new IllegalArgumentException("cannot reshape " + str(from) + " to " + str(to));
            }
            out[infer] = total / known;
        } else if (known != total) {
            throw new IllegalArgumentException("cannot reshape " + str(from) + " (" + total + " elements) to "
                    + str(to) + " (" + known + " elements)");
        }
        return out;
    }

    /** Numpy broadcasting of two shapes; null when they do not broadcast. Unknown (-1) dims broadcast with 1 or -1. */
    public static long[] broadcast(long[] a, long[] b) {
        int n = Math.max(a.length, b.length);
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            long da = i < n - a.length ? 1 : a[i - (n - a.length)];
            long db = i < n - b.length ? 1 : b[i - (n - b.length)];
            if (da == db || db == 1) {
                out[i] = da;
            } else if (da == 1) {
                out[i] = db;
            } else if (da == -1 || db == -1) {
                out[i] = da == -1 ? db : da;
            } else {
                return null;
            }
        }
        return out;
    }
}
