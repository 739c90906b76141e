package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * depthwise_conv2d's direct kernels (groups = input channels, filter [c multiplier, 1, kh, kw]): each filter sees one
 * channel, so an im2col matrix would hold kh kw copies of the image for a GEMM of one row per group. Instead each
 * output row is built from kh kw scaled input rows (an axpy per tap, vectorised along the row for stride 1), the
 * input gradient by the adjoint axpys, and the filter gradient by dot products of the same rows.
 * <p>With {@code reluInput} the kernels read relu(x) wherever they read x, and the input gradient is masked to where x
 * is positive: the fused relu + depthwise convolution, whose relu output is never stored.
 */
final class DepthwiseConvolution {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final int L = S.length();
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    private DepthwiseConvolution() {
    }

    /** The input row a tap reads for an output row, or -1 in the padding. */
    private static int inputRow(ConvGeometry g, int oy, int ky) {
        int iy = oy * g.strideH() - g.padTop() + ky * g.dilationH();
        return iy >= 0 && iy < g.h() ? iy : -1;
    }

    /** y = depthwise convolution of x with w. */
    static void forward(ConvGeometry g, MemorySegment x, MemorySegment w, MemorySegment y) {
        forward(g, x, w, y, false);
    }

    /** y = depthwise convolution of x, or of relu(x) with {@code reluInput}, with w. */
    static void forward(ConvGeometry g, MemorySegment x, MemorySegment w, MemorySegment y, boolean reluInput) {
        int multiplier = (int) (g.f() / g.c());
        int ow = (int) g.ow();
        for (long n = 0; n < g.n(); n++) {
            for (int fo = 0; fo < g.f(); fo++) {
                long in = (n * g.c() + fo / multiplier) * g.pixels();
                long out = (n * g.f() + fo) * g.positions();
                y.asSlice(out * Float.BYTES, (long) g.positions() * Float.BYTES).fill((byte) 0);
                for (int oy = 0; oy < g.oh(); oy++) {
                    for (int ky = 0; ky < g.kh(); ky++) {
                        int iy = inputRow(g, oy, ky);
                        if (iy < 0) {
                            continue;
                        }
                        for (int kx = 0; kx < g.kw(); kx++) {
                            float wv = w.getAtIndex(F32.F, ((long) fo * g.kh() + ky) * g.kw() + kx);
                            int x0 = Im2Col.firstInside(g, kx);
                            int x1 = Im2Col.endInside(g, kx);
                            long src = in + (long) iy * g.w() + kx * g.dilationW() - g.padLeft();
                            axpy(wv, x, src, g.strideW(), y, out + (long) oy * ow, x0, x1, reluInput);
                        }
                    }
                }
            }
        }
    }

    /** dx = the input gradient for dy (dx is overwritten). */
    static void backwardData(ConvGeometry g, MemorySegment dy, MemorySegment w, MemorySegment dx) {
        int multiplier = (int) (g.f() / g.c());
        int ow = (int) g.ow();
        dx.asSlice(0, g.n() * g.c() * g.pixels() * Float.BYTES).fill((byte) 0);
        for (long n = 0; n < g.n(); n++) {
            for (int fo = 0; fo < g.f(); fo++) {
                long in = (n * g.c() + fo / multiplier) * g.pixels();
                long out = (n * g.f() + fo) * g.positions();
                for (int oy = 0; oy < g.oh(); oy++) {
                    for (int ky = 0; ky < g.kh(); ky++) {
                        int iy = inputRow(g, oy, ky);
                        if (iy < 0) {
                            continue;
                        }
                        for (int kx = 0; kx < g.kw(); kx++) {
                            float wv = w.getAtIndex(F32.F, ((long) fo * g.kh() + ky) * g.kw() + kx);
                            int x0 = Im2Col.firstInside(g, kx);
                            int x1 = Im2Col.endInside(g, kx);
                            long at = in + (long) iy * g.w() + kx * g.dilationW() - g.padLeft();
                            scatterAxpy(wv, dy, out + (long) oy * ow, dx, at, g.strideW(), x0, x1);
                        }
                    }
                }
            }
        }
    }

    /** dx = dx where x > 0, else 0: the input gradient through a relu of x (NaN in x masks like any non-positive). */
    static void maskByPositive(MemorySegment x, MemorySegment dx, long n) {
        long i = 0;
        FloatVector zero = FloatVector.zero(S);
        for (long bound = S.loopBound(n); i < bound; i += L) {
            FloatVector xv = FloatVector.fromMemorySegment(S, x, i * Float.BYTES, NATIVE);
            FloatVector.fromMemorySegment(S, dx, i * Float.BYTES, NATIVE)
                    .blend(zero, xv.compare(jdk.incubator.vector.VectorOperators.GT, 0f).not())
                    .intoMemorySegment(dx, i * Float.BYTES, NATIVE);
        }
        for (; i < n; i++) {
            if (!(x.getAtIndex(F32.F, i) > 0f)) {
                dx.setAtIndex(F32.F, i, 0f);
            }
        }
    }

    /** dw = the filter gradient for x and dy (dw is overwritten). */
    static void backwardFilter(ConvGeometry g, MemorySegment x, MemorySegment dy, MemorySegment dw) {
        backwardFilter(g, x, dy, dw, false);
    }

    /** dw = the filter gradient for x, or relu(x) with {@code reluInput}, and dy (dw is overwritten). */
    static void backwardFilter(ConvGeometry g, MemorySegment x, MemorySegment dy, MemorySegment dw, boolean reluInput) {
        int multiplier = (int) (g.f() / g.c());
        int ow = (int) g.ow();
        int taps = g.kh() * g.kw();
        double[] sums = new double[taps];
        for (int fo = 0; fo < g.f(); fo++) {
            java.util.Arrays.fill(sums, 0);
            for (long n = 0; n < g.n(); n++) {
                long in = (n * g.c() + fo / multiplier) * g.pixels();
                long out = (n * g.f() + fo) * g.positions();
                for (int oy = 0; oy < g.oh(); oy++) {
                    for (int ky = 0; ky < g.kh(); ky++) {
                        int iy = inputRow(g, oy, ky);
                        if (iy < 0) {
                            continue;
                        }
                        for (int kx = 0; kx < g.kw(); kx++) {
                            int x0 = Im2Col.firstInside(g, kx);
                            int x1 = Im2Col.endInside(g, kx);
                            long src = in + (long) iy * g.w() + kx * g.dilationW() - g.padLeft();
                            sums[ky * g.kw() + kx] += dot(dy, out + (long) oy * ow, x, src, g.strideW(), x0, x1,
                                    reluInput);
                        }
                    }
                }
            }
            for (int t = 0; t < taps; t++) {
                dw.setAtIndex(F32.F, (long) fo * taps + t, (float) sums[t]);
            }
        }
    }

    /** y[yAt + ox] += a x[xAt + ox stride] (a relu(x[...]) with {@code relu}) for ox in [x0, x1). */
    private static void axpy(float a, MemorySegment x, long xAt, int stride, MemorySegment y, long yAt, int x0, int x1,
                             boolean relu) {
        int ox = x0;
        if (stride == 1) {
            FloatVector av = FloatVector.broadcast(S, a);
            for (int bound = x0 + S.loopBound(x1 - x0); ox < bound; ox += L) {
                long yb = (yAt + ox) * Float.BYTES;
                FloatVector xv = FloatVector.fromMemorySegment(S, x, (xAt + ox) * Float.BYTES, NATIVE);
                (relu ? xv.max(0f) : xv).mul(av)
                        .add(FloatVector.fromMemorySegment(S, y, yb, NATIVE)).intoMemorySegment(y, yb, NATIVE);
            }
        }
        for (; ox < x1; ox++) {
            float xv = x.getAtIndex(F32.F, xAt + (long) ox * stride);
            y.setAtIndex(F32.F, yAt + ox, y.getAtIndex(F32.F, yAt + ox) + a * (relu ? Math.max(xv, 0f) : xv));
        }
    }

    /** dx[dxAt + ox stride] += a dy[dyAt + ox] for ox in [x0, x1). */
    private static void scatterAxpy(float a, MemorySegment dy, long dyAt, MemorySegment dx, long dxAt, int stride,
                                    int x0, int x1) {
        int ox = x0;
        if (stride == 1) {
            FloatVector av = FloatVector.broadcast(S, a);
            for (int bound = x0 + S.loopBound(x1 - x0); ox < bound; ox += L) {
                long xb = (dxAt + ox) * Float.BYTES;
                FloatVector.fromMemorySegment(S, dy, (dyAt + ox) * Float.BYTES, NATIVE).mul(av)
                        .add(FloatVector.fromMemorySegment(S, dx, xb, NATIVE)).intoMemorySegment(dx, xb, NATIVE);
            }
        }
        for (; ox < x1; ox++) {
            long at = dxAt + (long) ox * stride;
            dx.setAtIndex(F32.F, at, dx.getAtIndex(F32.F, at) + a * dy.getAtIndex(F32.F, dyAt + ox));
        }
    }

    /** The sum of dy[dyAt + ox] x[xAt + ox stride] (relu(x[...]) with {@code relu}) for ox in [x0, x1). */
    private static double dot(MemorySegment dy, long dyAt, MemorySegment x, long xAt, int stride, int x0, int x1,
                              boolean relu) {
        int ox = x0;
        float sum = 0;
        if (stride == 1) {
            FloatVector acc = FloatVector.zero(S);
            for (int bound = x0 + S.loopBound(x1 - x0); ox < bound; ox += L) {
                FloatVector xv = FloatVector.fromMemorySegment(S, x, (xAt + ox) * Float.BYTES, NATIVE);
                acc = FloatVector.fromMemorySegment(S, dy, (dyAt + ox) * Float.BYTES, NATIVE)
                        .fma(relu ? xv.max(0f) : xv, acc);
            }
            sum = acc.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
        }
        for (; ox < x1; ox++) {
            float xv = x.getAtIndex(F32.F, xAt + (long) ox * stride);
            sum += dy.getAtIndex(F32.F, dyAt + ox) * (relu ? Math.max(xv, 0f) : xv);
        }
        return sum;
    }
}
