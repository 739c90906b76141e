package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
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

    /** col (row length count oh ow) = im2col of images b0 .. b0 + count - 1 of {@code image}. */
    static void im2col(ConvGeometry g, MemorySegment image, int b0, int count, MemorySegment col) {
        int ow = (int) g.ow();
        int oh = (int) g.oh();
        int w = (int) g.w();
        int h = (int) g.h();
        long positions = g.positions();
        long ld = count * positions;
        long row = 0;
        for (int ci = 0; ci < g.c(); ci++) {
            for (int ky = 0; ky < g.kh(); ky++) {
                for (int kx = 0; kx < g.kw(); kx++, row++) {
                    int x0 = firstInside(g, kx);
                    int x1 = Math.max(x0, endInside(g, kx));
                    int shift = kx * g.dilationW() - g.padLeft();
                    for (int b = 0; b < count; b++) {
                        long src = ((long) (b0 + b) * g.c() + ci) * g.pixels();
                        long dst = row * ld + b * positions;
                        for (int oy = 0; oy < oh; oy++, dst += ow) {
                            int iy = oy * g.strideH() - g.padTop() + ky * g.dilationH();
                            if (iy < 0 || iy >= h) {
                                zero(col, dst, ow);
                                continue;
                            }
                            zero(col, dst, x0);
                            long rowStart = src + (long) iy * w + shift;
                            if (g.strideW() == 1) {
                                copy(image, rowStart + x0, col, dst + x0, x1 - x0);
                            } else {
                                for (int ox = x0; ox < x1; ox++) {
                                    col.setAtIndex(F32.F, dst + ox, image.getAtIndex(F32.F, rowStart + (long) ox * g.strideW()));
                                }
                            }
                            zero(col, dst + x1, ow - x1);
                        }
                    }
                }
            }
        }
    }

    /** image (images b0 .. b0 + count - 1, which it overwrites) = col2im of {@code col}: each element added to its pixel. */
    static void col2im(ConvGeometry g, MemorySegment col, int b0, int count, MemorySegment image) {
        int ow = (int) g.ow();
        int oh = (int) g.oh();
        int w = (int) g.w();
        int h = (int) g.h();
        long positions = g.positions();
        long ld = count * positions;
        image.asSlice((long) b0 * g.c() * g.pixels() * Float.BYTES, (long) count * g.c() * g.pixels() * Float.BYTES)
                .fill((byte) 0);
        long row = 0;
        for (int ci = 0; ci < g.c(); ci++) {
            for (int ky = 0; ky < g.kh(); ky++) {
                for (int kx = 0; kx < g.kw(); kx++, row++) {
                    int x0 = firstInside(g, kx);
                    int x1 = Math.max(x0, endInside(g, kx));
                    int shift = kx * g.dilationW() - g.padLeft();
                    for (int b = 0; b < count; b++) {
                        long dstImage = ((long) (b0 + b) * g.c() + ci) * g.pixels();
                        long src = row * ld + b * positions;
                        for (int oy = 0; oy < oh; oy++, src += ow) {
                            int iy = oy * g.strideH() - g.padTop() + ky * g.dilationH();
                            if (iy < 0 || iy >= h) {
                                continue;
                            }
                            long rowStart = dstImage + (long) iy * w + shift;
                            if (g.strideW() == 1) {
                                accumulate(col, src + x0, image, rowStart + x0, x1 - x0);
                            } else {
                                for (int ox = x0; ox < x1; ox++) {
                                    long at = rowStart + (long) ox * g.strideW();
                                    image.setAtIndex(F32.F, at, image.getAtIndex(F32.F, at) + col.getAtIndex(F32.F, src + ox));
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    private static void zero(MemorySegment s, long at, int n) {
        if (n > 0) {
            s.asSlice(at * Float.BYTES, (long) n * Float.BYTES).fill((byte) 0);
        }
    }

    /** dst[dstAt ..] = src[srcAt ..], n floats. */
    static void copy(MemorySegment src, long srcAt, MemorySegment dst, long dstAt, int n) {
        int i = 0;
        for (int bound = S.loopBound(n); i < bound; i += L) {
            FloatVector.fromMemorySegment(S, src, (srcAt + i) * Float.BYTES, NATIVE)
                    .intoMemorySegment(dst, (dstAt + i) * Float.BYTES, NATIVE);
        }
        for (; i < n; i++) {
            dst.setAtIndex(F32.F, dstAt + i, src.getAtIndex(F32.F, srcAt + i));
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
        for (; i < n; i++) {
            dst.setAtIndex(F32.F, dstAt + i, dst.getAtIndex(F32.F, dstAt + i) + src.getAtIndex(F32.F, srcAt + i));
        }
    }
}
