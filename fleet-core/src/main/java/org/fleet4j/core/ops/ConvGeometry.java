package org.fleet4j.core.ops;

import java.util.Arrays;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.Shapes;

/**
 * One 2-D convolution seen as im2col + GEMM: an image side {@code [n, c, h, w]} that the kernel window slides over,
 * and a column side {@code [n, f, oh, ow]} with one value per filter and window position; the filter is
 * {@code [f, c / groups, kh, kw]}. For conv2d the image is the input and the columns the output; for conv2d_transpose
 * the other way round (its input is the column side, its output the image), which is why both share this class and
 * the kernels of {@link Convolution}. Paddings are resolved to [top, bottom, left, right] as Paddle resolves
 * {@code padding_algorithm}: EXPLICIT takes them as given (2 values mean the same on both sides), VALID is none, SAME
 * pads so that the column side is ceil(image / stride) with the odd pixel at the bottom and right, and sets the
 * dilation to 1.
 * <p>A dimension of -1 (the batch, known only when a program runs) stays -1.
 */
record ConvGeometry(long n, long c, long h, long w, long f, long oh, long ow, int kh, int kw, int strideH, int strideW,
                    int padTop, int padBottom, int padLeft, int padRight, int dilationH, int dilationW, int groups) {

    /** The attributes that Paddle's conv ops share, as given, read once from an op. */
    record Attrs(int[] strides, int[] paddings, String algorithm, int[] dilations, int groups) {
        static Attrs of(Op op) {
            return new Attrs(op.attr("strides"), op.attr("paddings"), op.stringAttr("padding_algorithm"),
                    op.attr("dilations"), op.intAttr("groups"));
        }

        void validate() {
            pair("strides", strides, 1);
            pair("dilations", dilations, 1);
            if (paddings.length != 2 && paddings.length != 4) {
                throw new IllegalArgumentException("paddings " + Arrays.toString(paddings)
                        + " must have 2 values [h, w] or 4 [top, bottom, left, right]");
            }
            for (int p : paddings) {
                if (p < 0) {
                    throw new IllegalArgumentException("paddings " + Arrays.toString(paddings) + " must be >= 0");
                }
            }
            if (!algorithm.equals("EXPLICIT") && !algorithm.equals("SAME") && !algorithm.equals("VALID")) {
                throw new IllegalArgumentException("padding_algorithm '" + algorithm
                        + "' is not EXPLICIT, SAME or VALID");
            }
            if (groups < 1) {
                throw new IllegalArgumentException("groups must be >= 1, is " + groups);
            }
        }

        private static void pair(String name, int[] v, int min) {
            if (v.length != 2 || v[0] < min || v[1] < min) {
                throw new IllegalArgumentException(name + " " + Arrays.toString(v) + " must be 2 values >= " + min
                        + " ([h, w])");
            }
        }

        /** [top, bottom, left, right] for an image of h x w, as Paddle resolves the algorithm. */
        int[] resolvedPaddings(long h, long w, int kh, int kw) {
            return resolvePaddings(algorithm, paddings, strides, h, w, kh, kw);
        }

        int[] resolvedDilations() {
            return algorithm.equals("SAME") ? new int[]{1, 1} : dilations.clone();
        }

    }

    /**
     * Paddings [top, bottom, left, right] of a window kh x kw sliding with {@code strides} over h x w, as Paddle's
     * conv and pool ops resolve {@code padding_algorithm} (shared with {@link PoolGeometry}).
     */
    static int[] resolvePaddings(String algorithm, int[] paddings, int[] strides, long h, long w, int kh, int kw) {
        return switch (algorithm) {
            case "VALID" -> new int[4];
            case "SAME" -> {
                int[] p = new int[4];
                same(p, 0, h, strides[0], kh);
                same(p, 2, w, strides[1], kw);
                yield p;
            }
            default -> paddings.length == 4 ? paddings.clone()
                    : new int[]{paddings[0], paddings[0], paddings[1], paddings[1]};
        };
    }

    private static void same(int[] p, int at, long size, int stride, int k) {
        if (size < 0) {
            return;
        }
        long out = (size + stride - 1) / stride;
        long sum = Math.max((out - 1) * stride + k - size, 0);
        p[at] = (int) (sum / 2);
        p[at + 1] = (int) (sum - sum / 2);
    }

    /**
     * conv2d: input {@code x} [n, c, h, w] and filter [f, c / groups, kh, kw] give the output's height and width.
     *
     * @throws IllegalArgumentException saying which shape or attribute is wrong and what to change
     */
    static ConvGeometry conv(long[] x, long[] filter, Attrs a) {
        a.validate();
        rank4("Input", x);
        rank4("Filter", filter);
        int groups = a.groups();
        long c = x[1];
        long f = filter[0];
        channels(c, f, filter[1], groups, "Input", "Filter dimension 0 (output channels)");
        int kh = (int) filter[2];
        int kw = (int) filter[3];
        int[] p = a.resolvedPaddings(x[2], x[3], kh, kw);
        int[] d = a.resolvedDilations();
        long oh = outSize("height", x[2], p[0], p[1], kh, d[0], a.strides()[0]);
        long ow = outSize("width", x[3], p[2], p[3], kw, d[1], a.strides()[1]);
        return new ConvGeometry(x[0], c, x[2], x[3], f, oh, ow, kh, kw, a.strides()[0], a.strides()[1],
                p[0], p[1], p[2], p[3], d[0], d[1], groups);
    }

    /**
     * conv2d_transpose: input {@code x} [n, cin, h, w] and filter [cin, cout / groups, kh, kw] give an output of
     * (h - 1) stride - pads + dilation (kh - 1) + 1 + output_padding rows (likewise columns), or {@code outputSize}
     * when given (it must be one of the sizes that convolve back to h).
     */
    static ConvGeometry transposed(long[] x, long[] filter, Attrs a, int[] outputPadding, int[] outputSize) {
        a.validate();
        rank4("Input", x);
        rank4("Filter", filter);
        int groups = a.groups();
        long f = x[1];
        if (f >= 0 && filter[0] != f) {
            throw new IllegalArgumentException("Filter dimension 0 is " + filter[0] + " but Input has " + f
                    + " channels: conv2d_transpose's filter is [in channels, out channels / groups, kh, kw]");
        }
        if (f >= 0 && f % groups != 0) {
            throw new IllegalArgumentException("groups " + groups + " does not divide Input's " + f + " channels");
        }
        long c = filter[1] * groups;
        int kh = (int) filter[2];
        int kw = (int) filter[3];
        int[] p = a.resolvedPaddings(x[2], x[3], kh, kw);
        int[] d = a.resolvedDilations();
        if (outputPadding.length != 0 && outputPadding.length != 2) {
            throw new IllegalArgumentException("output_padding " + Arrays.toString(outputPadding)
                    + " must be empty or 2 values [h, w]");
        }
        if (outputSize.length != 0 && outputSize.length != 2) {
            throw new IllegalArgumentException("output_size " + Arrays.toString(outputSize)
                    + " must be empty or 2 values [h, w]");
        }
        long[] size = new long[2];
        for (int i = 0; i < 2; i++) {
            long in = x[2 + i];
            int k = i == 0 ? kh : kw;
            int stride = a.strides()[i];
            long base = in < 0 ? -1 : (in - 1) * stride - p[2 * i] - p[2 * i + 1] + (long) d[i] * (k - 1) + 1;
            int extra = outputPadding.length == 2 ? outputPadding[i] : 0;
            if (extra < 0 || (extra >= stride && extra >= d[i])) {
                throw new IllegalArgumentException("output_padding " + Arrays.toString(outputPadding)
                        + " must be >= 0 and smaller than the stride or the dilation");
            }
            size[i] = base < 0 ? -1 : base + extra;
            if (outputSize.length == 2 && base >= 0) {
                if (outputSize[i] < base || outputSize[i] >= base + stride) {
                    throw new IllegalArgumentException("output_size " + Arrays.toString(outputSize) + ": "
                            + (i == 0 ? "height " : "width ") + outputSize[i] + " is not in [" + base + ", "
                            + (base + stride) + "), the sizes that convolve back to the input's " + in);
                }
                size[i] = outputSize[i];
            }
            if (base >= 0 && base < 1) {
                throw new IllegalArgumentException("the output " + (i == 0 ? "height" : "width") + " would be "
                        + base + "; use smaller paddings");
            }
        }
        return new ConvGeometry(x[0], c, size[0], size[1], f, x[2], x[3], kh, kw, a.strides()[0], a.strides()[1],
                p[0], p[1], p[2], p[3], d[0], d[1], groups);
    }

    private static void rank4(String slot, long[] s) {
        if (s.length != 4) {
            throw new IllegalArgumentException(slot + " must be 4-D ("
                    + (slot.equals("Filter") ? "[out channels, in channels / groups, kh, kw]" : "NCHW")
                    + "), is " + Shapes.str(s) + (slot.equals("Input") && s.length == 2
                    ? "; reshape [N, C*H*W] data to [N, C, H, W] first" : ""));
        }
        for (int i = 1; i < 4; i++) {
            if (s[i] < 1 && !(slot.equals("Input") && i >= 2 && s[i] == -1)) {
                throw new IllegalArgumentException(slot + " " + Shapes.str(s) + " needs known positive channels"
                        + (slot.equals("Filter") ? " and kernel size" : ""));
            }
        }
    }

    private static void channels(long c, long f, long perGroup, int groups, String image, String filters) {
        if (c % groups != 0) {
            throw new IllegalArgumentException("groups " + groups + " does not divide " + image + "'s " + c
                    + " channels");
        }
        if (f % groups != 0) {
            throw new IllegalArgumentException("groups " + groups + " does not divide " + filters + " " + f);
        }
        if (perGroup * groups != c) {
            throw new IllegalArgumentException("Filter dimension 1 is " + perGroup + " but " + image + " has " + c
                    + " channels in " + groups + " group(s): it must be " + c / groups + " (channels / groups)");
        }
    }

    private static long outSize(String what, long in, int pad0, int pad1, int k, int dilation, int stride) {
        if (in < 0) {
            return -1;
        }
        long window = (long) dilation * (k - 1) + 1;
        long padded = in + pad0 + pad1;
        if (window > padded) {
            throw new IllegalArgumentException("the kernel's " + what + " " + k
                    + (dilation > 1 ? " (" + window + " with dilation " + dilation + ")" : "") + " is larger than the "
                    + "padded input's " + padded + " (" + in + " + paddings " + pad0 + " and " + pad1
                    + "); use a smaller kernel or dilation, or more padding");
        }
        return (padded - window) / stride + 1;
    }

    /** Rows of the im2col matrix of one group: (c / groups) kh kw. */
    int groupRows() {
        return (int) (c / groups) * kh * kw;
    }

    /** Filters of one group. */
    int groupFilters() {
        return (int) (f / groups);
    }

    /** Window positions of one image: oh ow. */
    int positions() {
        return (int) (oh * ow);
    }

    /** Pixels of one image channel: h w. */
    int pixels() {
        return (int) (h * w);
    }

    /** A 1x1 window that visits every pixel once: the image is its own im2col matrix. */
    boolean pointwise() {
        return kh == 1 && kw == 1 && strideH == 1 && strideW == 1 && padTop == 0 && padBottom == 0 && padLeft == 0
                && padRight == 0;
    }
}
