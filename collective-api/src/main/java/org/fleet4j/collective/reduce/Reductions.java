package org.fleet4j.collective.reduce;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorSpecies;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ReduceOp;

/**
 * Element-wise reductions between two memory regions, vectorised with the Vector API. One explicit loop per
 * dtype and op, because a loop whose operator is a run-time value is not compiled to vector instructions.
 * Native segments take the vector path; heap segments fall back to scalar code.
 */
public final class Reductions {
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfShort BF16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final VectorSpecies<Float> FS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Double> DS = DoubleVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> IS = IntVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Long> LS = LongVector.SPECIES_PREFERRED;

    private Reductions() {
    }

    /**
     * {@code dst[i] = dst[i] op src[i]} for {@code count} elements at the given byte offsets. AVG combines as SUM;
     * callers divide once at the end with {@link #divide}.
     */
    public static void combine(MemorySegment dst, long dstOffset, MemorySegment src, long srcOffset, long count,
                               DataType dtype, ReduceOp op) {
        if (count == 0) {
            return;
        }
        ReduceOp o = op == ReduceOp.AVG ? ReduceOp.SUM : op;
        if (dtype == DataType.BF16) {
            combineBf16(dst, dstOffset, src, srcOffset, count, o);
            return;
        }
        boolean vector = dst.isNative() && src.isNative();
        switch (dtype) {
            case F32 -> {
                switch (o) {
                    case SUM -> {
                        if (vector) {
                            addF32(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarAddF32(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case PROD -> {
                        if (vector) {
                            mulF32(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMulF32(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case MAX -> {
                        if (vector) {
                            maxF32(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMaxF32(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case MIN -> {
                        if (vector) {
                            minF32(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMinF32(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    default -> throw new AssertionError(o);
                }
            }
            case F64 -> {
                switch (o) {
                    case SUM -> {
                        if (vector) {
                            addF64(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarAddF64(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case PROD -> {
                        if (vector) {
                            mulF64(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMulF64(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case MAX -> {
                        if (vector) {
                            maxF64(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMaxF64(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case MIN -> {
                        if (vector) {
                            minF64(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMinF64(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    default -> throw new AssertionError(o);
                }
            }
            case I32 -> {
                switch (o) {
                    case SUM -> {
                        if (vector) {
                            addI32(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarAddI32(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case PROD -> {
                        if (vector) {
                            mulI32(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMulI32(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case MAX -> {
                        if (vector) {
                            maxI32(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMaxI32(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case MIN -> {
                        if (vector) {
                            minI32(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMinI32(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    default -> throw new AssertionError(o);
                }
            }
            case I64 -> {
                switch (o) {
                    case SUM -> {
                        if (vector) {
                            addI64(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarAddI64(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case PROD -> {
                        if (vector) {
                            mulI64(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMulI64(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case MAX -> {
                        if (vector) {
                            maxI64(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMaxI64(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    case MIN -> {
                        if (vector) {
                            minI64(dst, dstOffset, src, srcOffset, count);
                        } else {
                            scalarMinI64(dst, dstOffset, src, srcOffset, count);
                        }
                    }
                    default -> throw new AssertionError(o);
                }
            }
            default -> throw new AssertionError(dtype);
        }
    }

    private static void addF32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = FS.loopBound(n);
        for (; i < bound; i += FS.length()) {
            long off = i * 4;
            FloatVector a = FloatVector.fromMemorySegment(FS, dst, d + off, NATIVE);
            FloatVector b = FloatVector.fromMemorySegment(FS, src, s + off, NATIVE);
            a.add(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarAddF32(dst, d + i * 4, src, s + i * 4, n - i);
    }

    private static void scalarAddF32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            float a = dst.get(F32, d + j * 4);
            float b = src.get(F32, s + j * 4);
            dst.set(F32, d + j * 4, a + b);
        }
    }

    private static void mulF32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = FS.loopBound(n);
        for (; i < bound; i += FS.length()) {
            long off = i * 4;
            FloatVector a = FloatVector.fromMemorySegment(FS, dst, d + off, NATIVE);
            FloatVector b = FloatVector.fromMemorySegment(FS, src, s + off, NATIVE);
            a.mul(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMulF32(dst, d + i * 4, src, s + i * 4, n - i);
    }

    private static void scalarMulF32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            float a = dst.get(F32, d + j * 4);
            float b = src.get(F32, s + j * 4);
            dst.set(F32, d + j * 4, a * b);
        }
    }

    private static void maxF32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = FS.loopBound(n);
        for (; i < bound; i += FS.length()) {
            long off = i * 4;
            FloatVector a = FloatVector.fromMemorySegment(FS, dst, d + off, NATIVE);
            FloatVector b = FloatVector.fromMemorySegment(FS, src, s + off, NATIVE);
            a.max(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMaxF32(dst, d + i * 4, src, s + i * 4, n - i);
    }

    private static void scalarMaxF32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            float a = dst.get(F32, d + j * 4);
            float b = src.get(F32, s + j * 4);
            dst.set(F32, d + j * 4, Math.max(a, b));
        }
    }

    private static void minF32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = FS.loopBound(n);
        for (; i < bound; i += FS.length()) {
            long off = i * 4;
            FloatVector a = FloatVector.fromMemorySegment(FS, dst, d + off, NATIVE);
            FloatVector b = FloatVector.fromMemorySegment(FS, src, s + off, NATIVE);
            a.min(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMinF32(dst, d + i * 4, src, s + i * 4, n - i);
    }

    private static void scalarMinF32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            float a = dst.get(F32, d + j * 4);
            float b = src.get(F32, s + j * 4);
            dst.set(F32, d + j * 4, Math.min(a, b));
        }
    }

    private static void addF64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = DS.loopBound(n);
        for (; i < bound; i += DS.length()) {
            long off = i * 8;
            DoubleVector a = DoubleVector.fromMemorySegment(DS, dst, d + off, NATIVE);
            DoubleVector b = DoubleVector.fromMemorySegment(DS, src, s + off, NATIVE);
            a.add(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarAddF64(dst, d + i * 8, src, s + i * 8, n - i);
    }

    private static void scalarAddF64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            double a = dst.get(F64, d + j * 8);
            double b = src.get(F64, s + j * 8);
            dst.set(F64, d + j * 8, a + b);
        }
    }

    private static void mulF64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = DS.loopBound(n);
        for (; i < bound; i += DS.length()) {
            long off = i * 8;
            DoubleVector a = DoubleVector.fromMemorySegment(DS, dst, d + off, NATIVE);
            DoubleVector b = DoubleVector.fromMemorySegment(DS, src, s + off, NATIVE);
            a.mul(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMulF64(dst, d + i * 8, src, s + i * 8, n - i);
    }

    private static void scalarMulF64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            double a = dst.get(F64, d + j * 8);
            double b = src.get(F64, s + j * 8);
            dst.set(F64, d + j * 8, a * b);
        }
    }

    private static void maxF64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = DS.loopBound(n);
        for (; i < bound; i += DS.length()) {
            long off = i * 8;
            DoubleVector a = DoubleVector.fromMemorySegment(DS, dst, d + off, NATIVE);
            DoubleVector b = DoubleVector.fromMemorySegment(DS, src, s + off, NATIVE);
            a.max(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMaxF64(dst, d + i * 8, src, s + i * 8, n - i);
    }

    private static void scalarMaxF64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            double a = dst.get(F64, d + j * 8);
            double b = src.get(F64, s + j * 8);
            dst.set(F64, d + j * 8, Math.max(a, b));
        }
    }

    private static void minF64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = DS.loopBound(n);
        for (; i < bound; i += DS.length()) {
            long off = i * 8;
            DoubleVector a = DoubleVector.fromMemorySegment(DS, dst, d + off, NATIVE);
            DoubleVector b = DoubleVector.fromMemorySegment(DS, src, s + off, NATIVE);
            a.min(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMinF64(dst, d + i * 8, src, s + i * 8, n - i);
    }

    private static void scalarMinF64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            double a = dst.get(F64, d + j * 8);
            double b = src.get(F64, s + j * 8);
            dst.set(F64, d + j * 8, Math.min(a, b));
        }
    }

    private static void addI32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = IS.loopBound(n);
        for (; i < bound; i += IS.length()) {
            long off = i * 4;
            IntVector a = IntVector.fromMemorySegment(IS, dst, d + off, NATIVE);
            IntVector b = IntVector.fromMemorySegment(IS, src, s + off, NATIVE);
            a.add(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarAddI32(dst, d + i * 4, src, s + i * 4, n - i);
    }

    private static void scalarAddI32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            int a = dst.get(I32, d + j * 4);
            int b = src.get(I32, s + j * 4);
            dst.set(I32, d + j * 4, a + b);
        }
    }

    private static void mulI32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = IS.loopBound(n);
        for (; i < bound; i += IS.length()) {
            long off = i * 4;
            IntVector a = IntVector.fromMemorySegment(IS, dst, d + off, NATIVE);
            IntVector b = IntVector.fromMemorySegment(IS, src, s + off, NATIVE);
            a.mul(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMulI32(dst, d + i * 4, src, s + i * 4, n - i);
    }

    private static void scalarMulI32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            int a = dst.get(I32, d + j * 4);
            int b = src.get(I32, s + j * 4);
            dst.set(I32, d + j * 4, a * b);
        }
    }

    private static void maxI32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = IS.loopBound(n);
        for (; i < bound; i += IS.length()) {
            long off = i * 4;
            IntVector a = IntVector.fromMemorySegment(IS, dst, d + off, NATIVE);
            IntVector b = IntVector.fromMemorySegment(IS, src, s + off, NATIVE);
            a.max(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMaxI32(dst, d + i * 4, src, s + i * 4, n - i);
    }

    private static void scalarMaxI32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            int a = dst.get(I32, d + j * 4);
            int b = src.get(I32, s + j * 4);
            dst.set(I32, d + j * 4, Math.max(a, b));
        }
    }

    private static void minI32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = IS.loopBound(n);
        for (; i < bound; i += IS.length()) {
            long off = i * 4;
            IntVector a = IntVector.fromMemorySegment(IS, dst, d + off, NATIVE);
            IntVector b = IntVector.fromMemorySegment(IS, src, s + off, NATIVE);
            a.min(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMinI32(dst, d + i * 4, src, s + i * 4, n - i);
    }

    private static void scalarMinI32(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            int a = dst.get(I32, d + j * 4);
            int b = src.get(I32, s + j * 4);
            dst.set(I32, d + j * 4, Math.min(a, b));
        }
    }

    private static void addI64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = LS.loopBound(n);
        for (; i < bound; i += LS.length()) {
            long off = i * 8;
            LongVector a = LongVector.fromMemorySegment(LS, dst, d + off, NATIVE);
            LongVector b = LongVector.fromMemorySegment(LS, src, s + off, NATIVE);
            a.add(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarAddI64(dst, d + i * 8, src, s + i * 8, n - i);
    }

    private static void scalarAddI64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            long a = dst.get(I64, d + j * 8);
            long b = src.get(I64, s + j * 8);
            dst.set(I64, d + j * 8, a + b);
        }
    }

    private static void mulI64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = LS.loopBound(n);
        for (; i < bound; i += LS.length()) {
            long off = i * 8;
            LongVector a = LongVector.fromMemorySegment(LS, dst, d + off, NATIVE);
            LongVector b = LongVector.fromMemorySegment(LS, src, s + off, NATIVE);
            a.mul(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMulI64(dst, d + i * 8, src, s + i * 8, n - i);
    }

    private static void scalarMulI64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            long a = dst.get(I64, d + j * 8);
            long b = src.get(I64, s + j * 8);
            dst.set(I64, d + j * 8, a * b);
        }
    }

    private static void maxI64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = LS.loopBound(n);
        for (; i < bound; i += LS.length()) {
            long off = i * 8;
            LongVector a = LongVector.fromMemorySegment(LS, dst, d + off, NATIVE);
            LongVector b = LongVector.fromMemorySegment(LS, src, s + off, NATIVE);
            a.max(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMaxI64(dst, d + i * 8, src, s + i * 8, n - i);
    }

    private static void scalarMaxI64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            long a = dst.get(I64, d + j * 8);
            long b = src.get(I64, s + j * 8);
            dst.set(I64, d + j * 8, Math.max(a, b));
        }
    }

    private static void minI64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        long i = 0;
        long bound = LS.loopBound(n);
        for (; i < bound; i += LS.length()) {
            long off = i * 8;
            LongVector a = LongVector.fromMemorySegment(LS, dst, d + off, NATIVE);
            LongVector b = LongVector.fromMemorySegment(LS, src, s + off, NATIVE);
            a.min(b).intoMemorySegment(dst, d + off, NATIVE);
        }
        scalarMinI64(dst, d + i * 8, src, s + i * 8, n - i);
    }

    private static void scalarMinI64(MemorySegment dst, long d, MemorySegment src, long s, long n) {
        for (long j = 0; j < n; j++) {
            long a = dst.get(I64, d + j * 8);
            long b = src.get(I64, s + j * 8);
            dst.set(I64, d + j * 8, Math.min(a, b));
        }
    }

    private static void combineBf16(MemorySegment dst, long d, MemorySegment src, long s, long n, ReduceOp op) {
        for (long j = 0; j < n; j++) {
            float a = bf16ToFloat(dst.get(BF16, d + j * 2));
            float b = bf16ToFloat(src.get(BF16, s + j * 2));
            float r = switch (op) {
                case SUM, AVG -> a + b;
                case PROD -> a * b;
                case MAX -> Math.max(a, b);
                case MIN -> Math.min(a, b);
            };
            dst.set(BF16, d + j * 2, floatToBf16(r));
        }
    }

    /** Divides {@code count} elements by {@code divisor} in place: the last step of AVG (integers truncate). */
    public static void divide(MemorySegment seg, long offset, long count, DataType dtype, int divisor) {
        switch (dtype) {
            case F32 -> {
                long i = 0;
                if (seg.isNative()) {
                    float inv = divisor;
                    for (long bound = FS.loopBound(count); i < bound; i += FS.length()) {
                        FloatVector.fromMemorySegment(FS, seg, offset + i * 4, NATIVE).div(inv)
                                .intoMemorySegment(seg, offset + i * 4, NATIVE);
                    }
                }
                for (; i < count; i++) {
                    seg.set(F32, offset + i * 4, seg.get(F32, offset + i * 4) / divisor);
                }
            }
            case F64 -> {
                long i = 0;
                if (seg.isNative()) {
                    double inv = divisor;
                    for (long bound = DS.loopBound(count); i < bound; i += DS.length()) {
                        DoubleVector.fromMemorySegment(DS, seg, offset + i * 8, NATIVE).div(inv)
                                .intoMemorySegment(seg, offset + i * 8, NATIVE);
                    }
                }
                for (; i < count; i++) {
                    seg.set(F64, offset + i * 8, seg.get(F64, offset + i * 8) / divisor);
                }
            }
            case I32 -> {
                for (long i = 0; i < count; i++) {
                    seg.set(I32, offset + i * 4, seg.get(I32, offset + i * 4) / divisor);
                }
            }
            case I64 -> {
                for (long i = 0; i < count; i++) {
                    seg.set(I64, offset + i * 8, seg.get(I64, offset + i * 8) / divisor);
                }
            }
            case BF16 -> {
                for (long i = 0; i < count; i++) {
                    seg.set(BF16, offset + i * 2, floatToBf16(bf16ToFloat(seg.get(BF16, offset + i * 2)) / divisor));
                }
            }
        }
    }

    public static float bf16ToFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }

    /** Rounds to nearest even, as hardware bf16 conversions do; NaN stays NaN. */
    public static short floatToBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) ((bits >>> 16) | 0x40);
        }
        int rounding = 0x7FFF + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }
}
