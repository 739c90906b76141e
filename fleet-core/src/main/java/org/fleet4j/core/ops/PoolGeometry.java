package org.fleet4j.core.ops;

import java.util.Arrays;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.Shapes;

/**
 * The windows of one pool2d over X [n, c, h, w], as Paddle computes them: window oy covers input rows
 * [oy stride - padTop, + kh) clipped to the input (padding is never pooled), or for adaptive pooling rows
 * [floor(oy h / oh), ceil((oy + 1) h / oh)); likewise columns. Global pooling is one window of the whole image.
 * {@code divisor} is what an average divides by: the window's size within the input when exclusive (or adaptive),
 * else kh kw.
 */
record PoolGeometry(long n, long c, long h, long w, long oh, long ow, int[] rowStart, int[] rowEnd, int[] colStart,
                    int[] colEnd, int kernelArea, boolean exclusive) {

    /** pool2d's attributes, read once. */
    record Attrs(boolean max, int[] ksize, boolean global, int[] strides, int[] paddings, boolean exclusive,
                 boolean adaptive, boolean ceilMode, String algorithm) {
        static Attrs of(Op op) {
            String type = op.stringAttr("pooling_type");
            if (!type.equals("max") && !type.equals("avg")) {
                throw new IllegalArgumentException("pooling_type '" + type + "' is not max or avg");
            }
            return new Attrs(type.equals("max"), op.attr("ksize"), op.boolAttr("global_pooling"), op.attr("strides"),
                    op.attr("paddings"), op.boolAttr("exclusive"), op.boolAttr("adaptive"), op.boolAttr("ceil_mode"),
                    op.stringAttr("padding_algorithm"));
        }
    }

    /**
     * The windows for X of shape {@code x}.
     *
     * @throws IllegalArgumentException saying which shape or attribute is wrong and what to change
     */
    static PoolGeometry of(long[] x, Attrs a) {
        if (x.length != 4) {
            throw new IllegalArgumentException("X must be 4-D (NCHW), is " + Shapes.str(x)
                    + (x.length == 2 ? "; reshape [N, C*H*W] data to [N, C, H, W] first" : ""));
        }
        if (a.ksize().length != 2 || a.ksize()[0] < 1 || a.ksize()[1] < 1) {
            throw new IllegalArgumentException("ksize " + Arrays.toString(a.ksize()) + " must be 2 values >= 1 ([h, w]"
                    + (a.adaptive() ? ", the output size of adaptive pooling)" : ")"));
        }
        if (a.strides().length != 2 || a.strides()[0] < 1 || a.strides()[1] < 1) {
            throw new IllegalArgumentException("strides " + Arrays.toString(a.strides()) + " must be 2 values >= 1");
        }
        if (a.paddings().length != 2 && a.paddings().length != 4 || Arrays.stream(a.paddings()).anyMatch(p -> p < 0)) {
            throw new IllegalArgumentException("paddings " + Arrays.toString(a.paddings())
                    + " must be 2 values [h, w] or 4 [top, bottom, left, right], each >= 0");
        }
        if (!a.algorithm().equals("EXPLICIT") && !a.algorithm().equals("SAME") && !a.algorithm().equals("VALID")) {
            throw new IllegalArgumentException("padding_algorithm '" + a.algorithm() + "' is not EXPLICIT, SAME or VALID");
        }
        long h = x[2];
        long w = x[3];
        if (h < 1 || w < 1) {
            throw new IllegalArgumentException("X " + Shapes.str(x) + " needs a known height and width");
        }
        if (a.global()) {
            return windows(x, new int[]{(int) h, (int) w}, new int[]{1, 1}, new int[4], false, a.exclusive());
        }
        if (a.adaptive()) {
            return adaptive(x, a.ksize()[0], a.ksize()[1]);
        }
        int[] p = ConvGeometry.resolvePaddings(a.algorithm(), a.paddings(), a.strides(), h, w, a.ksize()[0],
                a.ksize()[1]);
        return windows(x, a.ksize(), a.strides(), p, a.ceilMode(), a.exclusive());
    }

    private static PoolGeometry windows(long[] x, int[] k, int[] s, int[] p, boolean ceil, boolean exclusive) {
        int h = (int) x[2];
        int w = (int) x[3];
        int oh = outSize("height", h, k[0], s[0], p[0], p[1], ceil);
        int ow = outSize("width", w, k[1], s[1], p[2], p[3], ceil);
        int[][] rows = clipped(oh, k[0], s[0], p[0], h);
        int[][] cols = clipped(ow, k[1], s[1], p[2], w);
        return new PoolGeometry(x[0], x[1], h, w, oh, ow, rows[0], rows[1], cols[0], cols[1], k[0] * k[1], exclusive);
    }

    private static int outSize(String what, int in, int k, int stride, int pad0, int pad1, boolean ceil) {
        int span = in + pad0 + pad1 - k;
        if (span < 0) {
            throw new IllegalArgumentException("the pooling window's " + what + " " + k + " is larger than the padded "
                    + "input's " + (in + pad0 + pad1) + " (" + in + " + paddings " + pad0 + " and " + pad1
                    + "); use a smaller ksize or more padding, or global_pooling");
        }
        return (ceil ? (span + stride - 1) / stride : span / stride) + 1;
    }

    private static int[][] clipped(int out, int k, int stride, int pad, int in) {
        int[] start = new int[out];
        int[] end = new int[out];
        for (int o = 0; o < out; o++) {
            int s = o * stride - pad;
            start[o] = Math.max(s, 0);
            end[o] = Math.max(start[o], Math.min(s + k, in));
        }
        return new int[][]{start, end};
    }

    private static PoolGeometry adaptive(long[] x, int oh, int ow) {
        int[][] rows = adaptiveWindows(oh, (int) x[2]);
        int[][] cols = adaptiveWindows(ow, (int) x[3]);
        return new PoolGeometry(x[0], x[1], x[2], x[3], oh, ow, rows[0], rows[1], cols[0], cols[1], 0, true);
    }

    private static int[][] adaptiveWindows(int out, int in) {
        int[] start = new int[out];
        int[] end = new int[out];
        for (int o = 0; o < out; o++) {
            start[o] = (int) Math.floorDiv((long) o * in, out);
            end[o] = (int) -Math.floorDiv(-(long) (o + 1) * in, out);
        }
        return new int[][]{start, end};
    }

    /** What the average of window (oy, ox) divides by; 0 for a window that lies wholly in the padding. */
    int divisor(int oy, int ox) {
        return exclusive ? (rowEnd[oy] - rowStart[oy]) * (colEnd[ox] - colStart[ox]) : kernelArea;
    }
}
