package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Copies (or, for float32, adds) a box of elements between two strided layouts: element (i0, ..., ik) of the box is
 * read at {@code srcOffset + sum i_d srcStrides[d]} and written at {@code dstOffset + sum i_d dstStrides[d]}, all in
 * elements. Trailing dims where both sides are contiguous are merged into runs moved at once, so a transpose that
 * keeps the last dim, a slice or a stack moves whole rows. transpose, slice, split, stack and expand are made of it.
 */
final class StridedCopy {
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;

    private StridedCopy() {
    }

    /** dst box = src box, for elements of {@code elemBytes} bytes. */
    static void copy(MemorySegment src, long srcOffset, long[] srcStrides, MemorySegment dst, long dstOffset,
                     long[] dstStrides, long[] shape, int elemBytes) {
        walk(src, srcOffset, srcStrides, dst, dstOffset, dstStrides, shape, elemBytes, false);
    }

    /** dst box += src box, float32; a dst stride of 0 sums every source element along that dim into one. */
    static void add(MemorySegment src, long srcOffset, long[] srcStrides, MemorySegment dst, long dstOffset,
                    long[] dstStrides, long[] shape) {
        walk(src, srcOffset, srcStrides, dst, dstOffset, dstStrides, shape, Float.BYTES, true);
    }

    private static void walk(MemorySegment src, long srcOffset, long[] srcStrides, MemorySegment dst, long dstOffset,
                             long[] dstStrides, long[] shape, int elemBytes, boolean add) {
        int rank = shape.length;
        for (long d : shape) {
            if (d == 0) {
                return;
            }
        }
        // merge trailing dims that are contiguous on both sides into one run
        long run = 1;
        int outerRank = rank;
        while (outerRank > 0 && srcStrides[outerRank - 1] == run && dstStrides[outerRank - 1] == run) {
            run *= shape[outerRank - 1];
            outerRank--;
        }
        long runSrcStride = 1;
        long runDstStride = 1;
        if (run == 1 && outerRank > 0) {
            // no contiguous run: the last dim is walked element by element
            outerRank--;
            run = shape[outerRank];
            runSrcStride = srcStrides[outerRank];
            runDstStride = dstStrides[outerRank];
        }
        boolean contiguousRun = runSrcStride == 1 && runDstStride == 1;
        long[] idx = new long[outerRank];
        long s = srcOffset;
        long t = dstOffset;
        while (true) {
            if (add && contiguousRun) {
                F32.accumulate(dst.asSlice(t * Float.BYTES, run * Float.BYTES), src.asSlice(s * Float.BYTES,
                        run * Float.BYTES), run);
            } else if (add) {
                for (long j = 0; j < run; j++) {
                    long di = t + j * runDstStride;
                    dst.setAtIndex(F, di, dst.getAtIndex(F, di) + src.getAtIndex(F, s + j * runSrcStride));
                }
            } else if (contiguousRun) {
                MemorySegment.copy(src, s * elemBytes, dst, t * elemBytes, run * elemBytes);
            } else {
                for (long j = 0; j < run; j++) {
                    MemorySegment.copy(src, (s + j * runSrcStride) * elemBytes, dst, (t + j * runDstStride) * elemBytes,
                            elemBytes);
                }
            }
            int d = outerRank - 1;
            while (d >= 0) {
                idx[d]++;
                s += srcStrides[d];
                t += dstStrides[d];
                if (idx[d] < shape[d]) {
                    break;
                }
                s -= srcStrides[d] * idx[d];
                t -= dstStrides[d] * idx[d];
                idx[d] = 0;
                d--;
            }
            if (d < 0) {
                return;
            }
        }
    }
}
