package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The im2col matrix of a chunk of images and its adjoint col2im. For images b0 .. b0 + count - 1 of a
 * {@link ConvGeometry}'s image side, the matrix has one row per (channel, ky, kx) and one column per (image, window
 * position): element ((ci kh + ky) kw + kx, b oh ow + oy ow + ox) is the image's pixel (ci, oy strideH - padTop + ky
 * dilationH, ox strideW - padLeft + kx dilationW), or 0 in the padding. With stride 1 each stretch of a row is a
 * shifted copy of an image row, copied with vectors.
 */
final class Im2Col {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final int L = S.length();
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    private Im2Col() {
    }

    /** The first window column whose tap kx lands inside the image, for each kx (shared by the rows of a chunk). */
    static int firstInside(ConvGeometry g, int kx) {
        long offset = (long) kx * g.dilationW() - g.padLeft();
        return offset >= 0 ? 0 : (int) Math.min(g.ow(), (-offset + g.strideW() - 1) / g.strideW());
    }

    /** One past the last window column whose tap kx lands inside the image. */
    static int endInside(ConvGeometry g, int kx) {
        long offset = (long) kx * g.dilationW() - g.padLeft();
        long last = g.w() - 1 - offset;
        return last < 0 ? 0 : (int) Math.min(g.ow(), last / g.strideW() + 1);
    }

    /**
     * Whether a tap's rows in a chunk form one contiguous stretch: with stride 1 and as many window columns as image
     * columns, window row oy + 1 reads image row iy + 1 at the same shift, so the whole band of rows inside the image
     * is one copy of the image's band (the columns that fall in the padding are zeroed after).
     */
    private static boolean banded(ConvGeometry g) {
        return g.strideW() == 1 && g.strideH() == 1 && g.ow() == g.w();
    }

    /** The first window row whose tap ky lands inside the image. */
    private static int firstRowInside(ConvGeometry g, int ky) {
        long offset = (long) ky * g.dilationH() - g.padTop();
        return offset >= 0 ? 0 : (int) Math.min(g.oh(), (-offset + g.strideH() - 1) / g.strideH());
    }

    /** One past the last window row whose tap ky lands inside the image. */
    private static int endRowInside(ConvGeometry g, int ky) {
        long offset = (long) ky * g.dilationH() - g.padTop();
        long last = g.h() - 1 - offset;
        return last < 0 ? 0 : (int) Math.min(g.oh(), last / g.strideH() + 1);
    }

    /** col (row length count oh ow) = im2col of images b0 .. b0 + count - 1 of {@code image}. */
    static void im2col(ConvGeometry g, MemorySegment image, int b0, int count, MemorySegment col) {
        int ow = (int) g.ow();
        int w = (int) g.w();
        int positions = g.positions();
        long ld = (long) count * positions;
        boolean banded = banded(g);
        long row = 0;
        for (int ci = 0; ci < g.c(); ci++) {
            for (int ky = 0; ky < g.kh(); ky++) {
                int y0 = firstRowInside(g, ky);
                int y1 = Math.max(y0, endRowInside(g, ky));
                for (int kx = 0; kx < g.kw(); kx++, row++) {
                    int x0 = firstInside(g, kx);
                    int x1 = Math.max(x0, endInside(g, kx));
                    int shift = kx * g.dilationW() - g.padLeft();
                    for (int b = 0; b < count; b++) {
                        long plane = ((long) (b0 + b) * g.c() + ci) * g.pixels();
                        long dst = row * ld + (long) b * positions;
                        zero(col, dst, y0 * ow);
                        zero(col, dst + (long) y1 * ow, (int) (g.oh() - y1) * ow);
                        if (y1 == y0) {
                            continue;
                        }
                        int iy0 = y0 * g.strideH() - g.padTop() + ky * g.dilationH();
                        if (banded && x1 > x0) {
                            copy(image, plane + (long) iy0 * w + shift + x0, col, dst + (long) y0 * ow + x0,
                                    (y1 - y0 - 1) * ow + x1 - x0);
                            zeroColumns(col, dst, y0, y1, ow, x0, x1);
                            continue;
                        }
                        for (int oy = y0; oy < y1; oy++) {
                            long out = dst + (long) oy * ow;
                            long in = plane + (long) (iy0 + (oy - y0) * g.strideH()) * w + shift;
                            zero(col, out, x0);
                            if (g.strideW() == 1) {
                                copy(image, in + x0, col, out + x0, x1 - x0);
                            } else if (g.strideW() == 2) {
                                gatherEven(image, in + 2L * x0, col, out + x0, x1 - x0);
                            } else {
                                for (int ox = x0; ox < x1; ox++) {
                                    col.setAtIndex(F32.F, out + ox, image.getAtIndex(F32.F, in + (long) ox * g.strideW()));
                                }
                            }
                            zero(col, out + x1, ow - x1);
                        }
                    }
                }
            }
        }
    }

    /**
     * image (images b0 .. b0 + count - 1, which it overwrites) = col2im of {@code col}: each element added to its
     * pixel. The elements of padding columns are zeroed in {@code col} first when a band is added in one stretch.
     */
    static void col2im(ConvGeometry g, MemorySegment col, int b0, int count, MemorySegment image) {
        int ow = (int) g.ow();
        int w = (int) g.w();
        int positions = g.positions();
        long ld = (long) count * positions;
        boolean banded = banded(g);
        image.asSlice((long) b0 * g.c() * g.pixels() * Float.BYTES, (long) count * g.c() * g.pixels() * Float.BYTES)
                .fill((byte) 0);
        long row = 0;
        for (int ci = 0; ci < g.c(); ci++) {
            for (int ky = 0; ky < g.kh(); ky++) {
                int y0 = firstRowInside(g, ky);
                int y1 = Math.max(y0, endRowInside(g, ky));
                for (int kx = 0; kx < g.kw(); kx++, row++) {
                    int x0 = firstInside(g, kx);
                    int x1 = Math.max(x0, endInside(g, kx));
                    int shift = kx * g.dilationW() - g.padLeft();
                    for (int b = 0; b < count && y1 > y0; b++) {
                        long plane = ((long) (b0 + b) * g.c() + ci) * g.pixels();
                        long src = row * ld + (long) b * positions;
                        int iy0 = y0 * g.strideH() - g.padTop() + ky * g.dilationH();
                        if (banded && x1 > x0) {
                            zeroColumns(col, src, y0, y1, ow, x0, x1);
                            accumulate(col, src + (long) y0 * ow + x0, image, plane + (long) iy0 * w + shift + x0,
                                    (y1 - y0 - 1) * ow + x1 - x0);
                            continue;
                        }
                        for (int oy = y0; oy < y1; oy++) {
                            long in = src + (long) oy * ow;
                            long at = plane + (long) (iy0 + (oy - y0) * g.strideH()) * w + shift;
                            if (g.strideW() == 1) {
                                accumulate(col, in + x0, image, at + x0, x1 - x0);
                            } else if (g.strideW() == 2) {
                                accumulateEven(col, in + x0, image, at + 2L * x0, x1 - x0);
                            } else {
                                for (int ox = x0; ox < x1; ox++) {
                                    long p = at + (long) ox * g.strideW();
                                    image.setAtIndex(F32.F, p, image.getAtIndex(F32.F, p) + col.getAtIndex(F32.F, in + ox));
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /** Zeroes columns [0, x0) and [x1, ow) of rows [y0, y1) of an oh x ow block at {@code at}. */
    private static void zeroColumns(MemorySegment s, long at, int y0, int y1, int ow, int x0, int x1) {
        if (x0 == 0 && x1 == ow) {
            return;
        }
        for (int oy = y0; oy < y1; oy++) {
            long row = at + (long) oy * ow;
            for (int ox = 0; ox < x0; ox++) {
                s.setAtIndex(F32.F, row + ox, 0f);
            }
            for (int ox = x1; ox < ow; ox++) {
                s.setAtIndex(F32.F, row + ox, 0f);
            }
        }
    }

    private static void zero(MemorySegment s, long at, int n) {
        int i = 0;
        if (n >= L) {
            FloatVector z = FloatVector.zero(S);
            for (int bound = S.loopBound(n); i < bound; i += L) {
                z.intoMemorySegment(s, (at + i) * Float.BYTES, NATIVE);
            }
        }
        for (; i < n; i++) {
            s.setAtIndex(F32.F, at + i, 0f);
        }
    }

    /** Lane i of the first vector's and then the second vector's even lanes: a stride-2 gather of two loads. */
    private static final VectorShuffle<Float> EVEN = VectorShuffle.fromOp(S, i -> 2 * i);
    private static final VectorShuffle<Float> LOW_PAIRS = VectorShuffle.fromOp(S, i -> i / 2);
    private static final VectorShuffle<Float> HIGH_PAIRS = VectorShuffle.fromOp(S, i -> L / 2 + i / 2);
    private static final VectorMask<Float> EVEN_LANES = VectorMask.fromLong(S, 0x5555_5555_5555_5555L);

    /** dst[dstAt + i] = src[srcAt + 2 i] for i < n (im2col of a stride-2 window). */
    static void gatherEven(MemorySegment src, long srcAt, MemorySegment dst, long dstAt, int n) {
        for (int i = 0; i < n; i += L) {
            int lanes = Math.min(L, n - i);
            int need = 2 * lanes - 1;
            long at = (srcAt + 2L * i) * Float.BYTES;
            FloatVector v0 = FloatVector.fromMemorySegment(S, src, at, NATIVE, S.indexInRange(0, need));
            FloatVector v1 = need > L
                    ? FloatVector.fromMemorySegment(S, src, at + (long) L * Float.BYTES, NATIVE, S.indexInRange(L, need))
                    : FloatVector.zero(S);
            v0.rearrange(EVEN, v1).intoMemorySegment(dst, (dstAt + i) * Float.BYTES, NATIVE, S.indexInRange(0, lanes));
        }
    }

    /** dst[dstAt + 2 i] += src[srcAt + i] for i < n (col2im of a stride-2 window). */
    static void accumulateEven(MemorySegment src, long srcAt, MemorySegment dst, long dstAt, int n) {
        for (int i = 0; i < n; i += L) {
            int lanes = Math.min(L, n - i);
            int need = 2 * lanes - 1;
            FloatVector c = FloatVector.fromMemorySegment(S, src, (srcAt + i) * Float.BYTES, NATIVE,
                    S.indexInRange(0, lanes));
            long at = (dstAt + 2L * i) * Float.BYTES;
            VectorMask<Float> m0 = EVEN_LANES.and(S.indexInRange(0, need));
            FloatVector.fromMemorySegment(S, dst, at, NATIVE, m0).add(c.rearrange(LOW_PAIRS))
                    .intoMemorySegment(dst, at, NATIVE, m0);
            if (need > L) {
                long at1 = at + (long) L * Float.BYTES;
                VectorMask<Float> m1 = EVEN_LANES.and(S.indexInRange(L, need));
                FloatVector.fromMemorySegment(S, dst, at1, NATIVE, m1).add(c.rearrange(HIGH_PAIRS))
                        .intoMemorySegment(dst, at1, NATIVE, m1);
            }
        }
    }

    /** dst[dstAt ..] = src[srcAt ..], n floats. */
    static void copy(MemorySegment src, long srcAt, MemorySegment dst, long dstAt, int n) {
        int i = 0;
        for (int bound = S.loopBound(n); i < bound; i += L) {
            FloatVector.fromMemorySegment(S, src, (srcAt + i) * Float.BYTES, NATIVE)
                    .intoMemorySegment(dst, (dstAt + i) * Float.BYTES, NATIVE);
        }
        if (i < n) {
            VectorMask<Float> m = S.indexInRange(i, n);
            FloatVector.fromMemorySegment(S, src, (srcAt + i) * Float.BYTES, NATIVE, m)
                    .intoMemorySegment(dst, (dstAt + i) * Float.BYTES, NATIVE, m);
        }
    }

    /** dst[dstAt ..] += src[srcAt ..], n floats. */
    static void accumulate(MemorySegment src, long srcAt, MemorySegment dst, long dstAt, int n) {
        int i = 0;
        for (int bound = S.loopBound(n); i < bound; i += L) {
            long d = (dstAt + i) * Float.BYTES;
            FloatVector.fromMemorySegment(S, dst, d, NATIVE)
                    .add(FloatVector.fromMemorySegment(S, src, (srcAt + i) * Float.BYTES, NATIVE))
                    .intoMemorySegment(dst, d, NATIVE);
        }
        if (i < n) {
            VectorMask<Float> m = S.indexInRange(i, n);
            long d = (dstAt + i) * Float.BYTES;
            FloatVector.fromMemorySegment(S, dst, d, NATIVE, m)
                    .add(FloatVector.fromMemorySegment(S, src, (srcAt + i) * Float.BYTES, NATIVE, m))
                    .intoMemorySegment(dst, d, NATIVE, m);
        }
    }
}
