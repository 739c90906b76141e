package org.fleet4j.core.ops;

import org.fleet4j.core.tensor.Shapes;

/**
 * How an input of an elementwise op maps onto the output: numpy broadcasting, or Paddle's {@code axis} (the
 * output dimension at which a lower-rank Y starts). Yields, per output element, the input element's index.
 */
final class Broadcast {
    /** Output shape of x op y, or null when they do not broadcast. {@code axis} -1 aligns trailing dims. */
    static long[] outShape(long[] x, long[] y, int axis) {
        return Shapes.broadcast(x, align(y, x.length, axis));
    }

    /** y's shape padded with 1s so that it has {@code rank} dims and starts at {@code axis}. */
    static long[] align(long[] y, int rank, int axis) {
        if (axis < 0 || y.length >= rank) {
            return y;
        }
        long[] out = new long[rank];
        java.util.Arrays.fill(out, 1);
        System.arraycopy(y, 0, out, axis, Math.min(y.length, rank - axis));
        return out;
    }

    /** Strides of {@code in} broadcast to {@code out}: 0 along dimensions where {@code in} has size 1. */
    static long[] strides(long[] in, long[] out) {
        long[] s = new long[out.length];
        long[] own = Shapes.strides(in);
        int off = out.length - in.length;
        for (int d = 0; d < out.length; d++) {
            int di = d - off;
            s[d] = di < 0 || in[di] == 1 ? 0 : own[di];
        }
        return s;
    }

    /** For every flat output index, the flat index into the input with the given broadcast strides. */
    static int[] indexMap(long[] outShape, long[] inStrides) {
        int n = (int) Shapes.numel(outShape);
        int[] map = new int[n];
        int rank = outShape.length;
        long[] idx = new long[rank];
        long off = 0;
        for (int i = 0; i < n; i++) {
            map[i] = (int) off;
            for (int d = rank - 1; d >= 0; d--) {
                idx[d]++;
                off += inStrides[d];
                if (idx[d] < outShape[d]) {
                    break;
                }
                off -= inStrides[d] * idx[d];
                idx[d] = 0;
            }
        }
        return map;
    }

    /**
     * When y repeats along leading dims of out (out = [rows, cols] after flattening, y = [cols]), the row
     * length; otherwise -1. This is the bias-add case and gets a fast path.
     */
    static long trailingRowLength(long[] outShape, long[] y) {
        long yn = Shapes.numel(y);
        long acc = 1;
        for (int d = outShape.length - 1; d >= 0; d--) {
            if (acc == yn) {
                break;
            }
            acc *= outShape[d];
        }
        if (acc != yn) {
            return -1;
        }
        // y must equal the trailing dims of out (ignoring its own leading 1s)
        int k = y.length - 1;
        long prod = 1;
        for (int d = outShape.length - 1; d >= 0 && prod < yn; d--, k--) {
            long yd = k >= 0 ? y[k] : 1;
            if (yd != outShape[d]) {
                return -1;
            }
            prod *= outShape[d];
        }
        for (; k >= 0; k--) {
            if (y[k] != 1) {
                return -1;
            }
        }
        return yn;
    }
}
