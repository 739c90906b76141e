package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * A stride-1 convolution computed straight from a zero-padded copy of each image, without an im2col matrix: on the
 * padded grid (Hp x Wp) the tap (ky, kx) of output position q = oy Wp + ox reads padded pixel q + ky dh Wp + kx dw, so
 * for one channel every tap reads a contiguous stretch of the padded image at its own offset. Output positions are
 * taken in tiles of 3 vectors (the last one or two vectors of an image alone), filters in blocks of {@link #FILTERS}; the micro-kernel keeps the 8 x 3 vector sums in
 * registers and, for each (channel, tap), loads 3 vectors of pixels and broadcasts 8 weights (24 FMAs for 11 loads).
 * The positions ox >= ow of each padded row are computed and dropped (Wp / ow more work, 2 / 30 for a 28-wide 3x3 with
 * padding 1). This is conv2d's forward, and, applied to the output gradient with the flipped filter, its input
 * gradient; it runs on heap arrays, whose bounds checks C2 takes out of the loops.
 */
final class DirectConvolution {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final int L = S.length();
    /** Filters per register block. */
    static final int FILTERS = 8;
    /** Vectors of positions per register block. */
    private static final int VECTORS = 3;

    private float[] padded = new float[0];
    /** The shape whose zero padding {@link #padded} holds. */
    private Shape paddedFor;
    private float[] packed = new float[0];
    private float[] out = new float[0];
    /** For each (channel, tap): where its pixel of output position 0 lies in the padded copy. */
    private int[] offsets = new int[0];

    /** Whether this kernel computes conv2d's forward pass for g: stride 1, one group. */
    static boolean servesForward(ConvGeometry g) {
        return g.strideH() == 1 && g.strideW() == 1 && g.groups() == 1;
    }

    /**
     * Whether it computes conv2d's input gradient for g: that is the convolution of dY, padded by dilation (k - 1)
     * less the forward's padding on each side, with the rotated filter, so no padding may exceed dilation (k - 1).
     */
    static boolean servesInputGradient(ConvGeometry g) {
        int reachH = g.dilationH() * (g.kh() - 1);
        int reachW = g.dilationW() * (g.kw() - 1);
        return servesForward(g) && g.padTop() <= reachH && g.padBottom() <= reachH && g.padLeft() <= reachW
                && g.padRight() <= reachW;
    }

    /** y = conv2d(x, w) for every image. */
    void forward(ConvGeometry g, MemorySegment x, MemorySegment w, MemorySegment y) {
        Shape s = new Shape((int) g.c(), (int) g.h(), (int) g.w(), (int) g.f(), g.kh(), g.kw(), g.dilationH(),
                g.dilationW(), g.padTop(), g.padBottom(), g.padLeft(), g.padRight());
        pack(s, w, false);
        for (int n = 0; n < g.n(); n++) {
            run(s, x, n, y);
        }
    }

    /** dx = conv2d's input gradient for dy, the convolution of dy with w rotated by 180 degrees (dx is overwritten). */
    void inputGradient(ConvGeometry g, MemorySegment dy, MemorySegment w, MemorySegment dx) {
        int reachH = g.dilationH() * (g.kh() - 1);
        int reachW = g.dilationW() * (g.kw() - 1);
        Shape s = new Shape((int) g.f(), (int) g.oh(), (int) g.ow(), (int) g.c(), g.kh(), g.kw(), g.dilationH(),
                g.dilationW(), reachH - g.padTop(), reachH - g.padBottom(), reachW - g.padLeft(), reachW - g.padRight());
        pack(s, w, true);
        for (int n = 0; n < g.n(); n++) {
            run(s, dy, n, dx);
        }
    }

    /**
     * The shape of one stride-1 convolution: {@code c} input planes of h x w, {@code f} filters of kh x kw with
     * dilations, paddings; output planes oh x ow.
     */
    record Shape(int c, int h, int w, int f, int kh, int kw, int dh, int dw, int padTop, int padBottom, int padLeft,
                 int padRight) {
        int paddedH() {
            return h + padTop + padBottom;
        }

        int paddedW() {
            return w + padLeft + padRight;
        }

        int oh() {
            return paddedH() - dh * (kh - 1);
        }

        int ow() {
            return paddedW() - dw * (kw - 1);
        }

        /** Positions computed per image: whole padded rows, rounded up to whole vectors. */
        int positions() {
            return (oh() * paddedW() + L - 1) / L * L;
        }

        /** Floats of one channel of the padded copy: the image, and the reach of the last tile's farthest tap. */
        int planeStride() {
            int reach = positions() + dh * (kh - 1) * paddedW() + dw * (kw - 1);
            return Math.max(paddedH() * paddedW(), reach);
        }

        int blocks() {
            return (f + FILTERS - 1) / FILTERS;
        }
    }

    /**
     * The filter as the micro-kernel reads it: for each block of 8 filters, for each (channel, tap), the block's 8
     * weights; filters past f (the last block's) are zero. {@code flipped} packs conv2d's input gradient instead: the
     * filter of the convolution of dY, [c, f, kh, kw] read from [f, c, kh, kw] rotated by 180 degrees.
     */
    private void pack(Shape s, MemorySegment w, boolean flipped) {
        int taps = s.kh() * s.kw();
        int k = s.c() * taps;
        int size = s.blocks() * FILTERS * k;
        if (packed.length < size) {
            packed = new float[size];
        }
        for (int fo = 0; fo < s.blocks() * FILTERS; fo++) {
            int base = fo / FILTERS * FILTERS * k + fo % FILTERS;
            for (int ci = 0; ci < s.c(); ci++) {
                for (int t = 0; t < taps; t++) {
                    float v = 0f;
                    if (fo < s.f()) {
                        long at = flipped ? ((long) ci * s.f() + fo) * taps + (taps - 1 - t)
                                : ((long) fo * s.c() + ci) * taps + t;
                        v = w.getAtIndex(F32.F, at);
                    }
                    packed[base + (ci * taps + t) * FILTERS] = v;
                }
            }
        }
    }

    /** y (image n of [n, f, oh, ow]) = the convolution of image n of x ([n, c, h, w]) with the packed filter. */
    private void run(Shape s, MemorySegment x, int n, MemorySegment y) {
        int wp = s.paddedW();
        int stride = s.planeStride();
        int positions = s.positions();
        if (padded.length < s.c() * stride) {
            padded = new float[s.c() * stride];
            paddedFor = null;
        }
        if (out.length < s.blocks() * FILTERS * positions) {
            out = new float[s.blocks() * FILTERS * positions];
        }
        if (!s.equals(paddedFor)) {
            // the padding is written once per shape: the image rows below never touch it
            java.util.Arrays.fill(padded, 0f);
            paddedFor = s;
        }
        long image = (long) n * s.c() * s.h() * s.w();
        for (int ci = 0; ci < s.c(); ci++) {
            int plane = ci * stride + s.padTop() * wp + s.padLeft();
            for (int iy = 0; iy < s.h(); iy++) {
                MemorySegment.copy(x, F32.F, (image + ((long) ci * s.h() + iy) * s.w()) * Float.BYTES,
                        padded, plane + iy * wp, s.w());
            }
        }
        int taps = s.kh() * s.kw();
        int k = s.c() * taps;
        if (offsets.length < k) {
            offsets = new int[k];
        }
        for (int ci = 0; ci < s.c(); ci++) {
            for (int ky = 0; ky < s.kh(); ky++) {
                for (int kx = 0; kx < s.kw(); kx++) {
                    offsets[(ci * s.kh() + ky) * s.kw() + kx] = ci * stride + ky * s.dh() * wp + kx * s.dw();
                }
            }
        }
        for (int b = 0; b < s.blocks(); b++) {
            int weights = b * FILTERS * k;
            int outBase = b * FILTERS * positions;
            int q = 0;
            for (; q + VECTORS * L <= positions; q += VECTORS * L) {
                tile(padded, offsets, k, packed, weights, q, out, outBase + q, positions);
            }
            for (; q < positions; q += L) {
                tileOfOneVector(padded, offsets, k, packed, weights, q, out, outBase + q, positions);
            }
        }
        int oh = s.oh();
        int ow = s.ow();
        long outImage = (long) n * s.f() * oh * ow;
        for (int fo = 0; fo < s.f(); fo++) {
            int from = fo / FILTERS * FILTERS * positions + fo % FILTERS * positions;
            for (int oy = 0; oy < oh; oy++) {
                MemorySegment.copy(out, from + oy * wp, y, F32.F,
                        (outImage + ((long) fo * oh + oy) * ow) * Float.BYTES, ow);
            }
        }
    }

    /**
     * The 8 filters x 3 vectors of positions from q: out[o + r positions + j] = sum over channels and taps of
     * weight(r, channel, tap) padded[channel stride + q + j + offset(tap)].
     */
    private static void tile(float[] padded, int[] offsets, int k, float[] packed, int weights, int q, float[] out,
                             int o, int positions) {
        FloatVector a00 = FloatVector.zero(S), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00;
        FloatVector a40 = a00, a41 = a00, a42 = a00, a50 = a00, a51 = a00, a52 = a00;
        FloatVector a60 = a00, a61 = a00, a62 = a00, a70 = a00, a71 = a00, a72 = a00;
        int wi = weights;
        for (int i = 0; i < k; i++) {
            {
                int p = q + offsets[i];
                FloatVector x0 = FloatVector.fromArray(S, padded, p);
                FloatVector x1 = FloatVector.fromArray(S, padded, p + L);
                FloatVector x2 = FloatVector.fromArray(S, padded, p + 2 * L);
                FloatVector w0 = FloatVector.broadcast(S, packed[wi]);
                a00 = x0.fma(w0, a00);
                a01 = x1.fma(w0, a01);
                a02 = x2.fma(w0, a02);
                FloatVector w1 = FloatVector.broadcast(S, packed[wi + 1]);
                a10 = x0.fma(w1, a10);
                a11 = x1.fma(w1, a11);
                a12 = x2.fma(w1, a12);
                FloatVector w2 = FloatVector.broadcast(S, packed[wi + 2]);
                a20 = x0.fma(w2, a20);
                a21 = x1.fma(w2, a21);
                a22 = x2.fma(w2, a22);
                FloatVector w3 = FloatVector.broadcast(S, packed[wi + 3]);
                a30 = x0.fma(w3, a30);
                a31 = x1.fma(w3, a31);
                a32 = x2.fma(w3, a32);
                FloatVector w4 = FloatVector.broadcast(S, packed[wi + 4]);
                a40 = x0.fma(w4, a40);
                a41 = x1.fma(w4, a41);
                a42 = x2.fma(w4, a42);
                FloatVector w5 = FloatVector.broadcast(S, packed[wi + 5]);
                a50 = x0.fma(w5, a50);
                a51 = x1.fma(w5, a51);
                a52 = x2.fma(w5, a52);
                FloatVector w6 = FloatVector.broadcast(S, packed[wi + 6]);
                a60 = x0.fma(w6, a60);
                a61 = x1.fma(w6, a61);
                a62 = x2.fma(w6, a62);
                FloatVector w7 = FloatVector.broadcast(S, packed[wi + 7]);
                a70 = x0.fma(w7, a70);
                a71 = x1.fma(w7, a71);
                a72 = x2.fma(w7, a72);
                wi += FILTERS;
            }
        }
        // stored here, not through a helper: vectors passed to a call C2 does not inline are boxed, loop included
        a00.intoArray(out, o);
        a01.intoArray(out, o + L);
        a02.intoArray(out, o + 2 * L);
        a10.intoArray(out, o + positions);
        a11.intoArray(out, o + positions + L);
        a12.intoArray(out, o + positions + 2 * L);
        a20.intoArray(out, o + 2 * positions);
        a21.intoArray(out, o + 2 * positions + L);
        a22.intoArray(out, o + 2 * positions + 2 * L);
        a30.intoArray(out, o + 3 * positions);
        a31.intoArray(out, o + 3 * positions + L);
        a32.intoArray(out, o + 3 * positions + 2 * L);
        a40.intoArray(out, o + 4 * positions);
        a41.intoArray(out, o + 4 * positions + L);
        a42.intoArray(out, o + 4 * positions + 2 * L);
        a50.intoArray(out, o + 5 * positions);
        a51.intoArray(out, o + 5 * positions + L);
        a52.intoArray(out, o + 5 * positions + 2 * L);
        a60.intoArray(out, o + 6 * positions);
        a61.intoArray(out, o + 6 * positions + L);
        a62.intoArray(out, o + 6 * positions + 2 * L);
        a70.intoArray(out, o + 7 * positions);
        a71.intoArray(out, o + 7 * positions + L);
        a72.intoArray(out, o + 7 * positions + 2 * L);
    }

    /** As {@link #tile} for the 8 filters and one vector of positions: an image's last positions. */
    private static void tileOfOneVector(float[] padded, int[] offsets, int k, float[] packed, int weights, int q,
                                        float[] out, int o, int positions) {
        FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        int wi = weights;
        for (int i = 0; i < k; i++) {
            FloatVector x0 = FloatVector.fromArray(S, padded, q + offsets[i]);
            a0 = x0.fma(FloatVector.broadcast(S, packed[wi]), a0);
            a1 = x0.fma(FloatVector.broadcast(S, packed[wi + 1]), a1);
            a2 = x0.fma(FloatVector.broadcast(S, packed[wi + 2]), a2);
            a3 = x0.fma(FloatVector.broadcast(S, packed[wi + 3]), a3);
            a4 = x0.fma(FloatVector.broadcast(S, packed[wi + 4]), a4);
            a5 = x0.fma(FloatVector.broadcast(S, packed[wi + 5]), a5);
            a6 = x0.fma(FloatVector.broadcast(S, packed[wi + 6]), a6);
            a7 = x0.fma(FloatVector.broadcast(S, packed[wi + 7]), a7);
            wi += FILTERS;
        }
        a0.intoArray(out, o);
        a1.intoArray(out, o + positions);
        a2.intoArray(out, o + 2 * positions);
        a3.intoArray(out, o + 3 * positions);
        a4.intoArray(out, o + 4 * positions);
        a5.intoArray(out, o + 5 * positions);
        a6.intoArray(out, o + 6 * positions);
        a7.intoArray(out, o + 7 * positions);
    }
}
