package org.fleet4j.collective;

import org.fleet4j.collective.reduce.Reductions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The vector loops and their scalar tails agree with plain arithmetic, on native and heap segments alike. */
class ReductionsTest {
    /** Longer than two vectors of the widest species (16 lanes of a 512-bit int or float vector): every tail length. */
    private static final int MAX_COUNT = 40;
    private static final float[] SPECIAL_F = {Float.NaN, 0f, -0f, 1f, -1f, Float.POSITIVE_INFINITY,
        Float.NEGATIVE_INFINITY, Float.MIN_VALUE, Float.MAX_VALUE, -Float.MAX_VALUE};
    private static final double[] SPECIAL_D = {Double.NaN, 0d, -0d, 1d, -1d, Double.POSITIVE_INFINITY,
        Double.NEGATIVE_INFINITY, Double.MIN_VALUE, Double.MAX_VALUE, -Double.MAX_VALUE};
    private static final long[] SPECIAL_I = {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, Long.MIN_VALUE,
        Long.MAX_VALUE, 1L << 32, 65537};

    @Test
    void everyDtypeAndOpMatchesScalarArithmeticIncludingTails() {
        try (Arena arena = Arena.ofConfined()) {
            for (DataType dt : DataType.values()) {
                for (ReduceOp op : ReduceOp.values()) {
                    for (long count : new long[] {1, 3, 17, 1000}) {
                        MemorySegment a = Buffers.filled(arena, dt, count, 0);
                        MemorySegment b = Buffers.filled(arena, dt, count, 1);
                        MemorySegment heap = MemorySegment.ofArray(new byte[(int) (count * dt.byteSize())]);
                        heap.copyFrom(a);
                        Reductions.combine(a, 0, b, 0, count, dt, op);
                        Reductions.combine(heap, 0, b, 0, count, dt, op);
                        if (op == ReduceOp.AVG) {
                            Reductions.divide(a, 0, count, dt, 2);
                            Reductions.divide(heap, 0, count, dt, 2);
                        }
                        MemorySegment heapResult = arena.allocate(heap.byteSize(), 8).copyFrom(heap);
                        for (long i = 0; i < count; i++) {
                            double want = Buffers.expected(dt, op, 2, i);
                            assertEquals(want, Buffers.get(a, dt, i), dt + " " + op + " x " + count + " at " + i);
                            assertEquals(want, Buffers.get(heapResult, dt, i), "heap " + dt + " " + op + " x " + count + " at " + i);
                        }
                    }
                }
            }
        }
    }

    @Test
    void bf16RoundsToNearestEven() {
        assertEquals(1.0f, Reductions.bf16ToFloat(Reductions.floatToBf16(1.0f)));
        // 1 + 2^-8 lies halfway between two bf16 values; ties go to the even one (1.0)
        assertEquals(1.0f, Reductions.bf16ToFloat(Reductions.floatToBf16(1.0f + 0x1p-8f)));
        assertEquals(1.0f + 0x1p-7f, Reductions.bf16ToFloat(Reductions.floatToBf16(1.0f + 0x1p-8f + 0x1p-12f)));
        assertEquals(Float.NaN, Reductions.bf16ToFloat(Reductions.floatToBf16(Float.NaN)));
    }

    /**
     * Every dtype and op, every count from 0 past two vectors (so every tail length), at unaligned offsets, native and
     * heap: each element bit for bit what scalar Java arithmetic gives, any NaN standing for any NaN (Java leaves a
     * NaN's payload open, and the JIT's code and the interpreter's already differ in it), and nothing written outside
     * the range.
     */
    @Test
    void everyDtypeOpAndTailLengthMatchesScalarArithmeticBitForBit() {
        SplittableRandom random = new SplittableRandom(36);
        try (Arena arena = Arena.ofConfined()) {
            for (DataType dt : DataType.values()) {
                for (ReduceOp op : ReduceOp.values()) {
                    for (int count = 0; count <= MAX_COUNT; count++) {
                        for (boolean heap : new boolean[] {false, true}) {
                            long dOff = dt.byteSize() * (long) random.nextInt(3) + (random.nextBoolean() ? 1 : 0);
                            long sOff = random.nextInt(5);
                            long bytes = (count + 4L) * dt.byteSize();
                            MemorySegment dst = arena.allocate(bytes, 64);
                            MemorySegment src = arena.allocate(bytes, 64);
                            randomBits(dst, random);
                            randomBits(src, random);
                            for (long i = 0; i < count; i++) {
                                set(dst, dt, dOff, i, randomValue(dt, random));
                                set(src, dt, sOff, i, randomValue(dt, random));
                            }
                            MemorySegment before = arena.allocate(bytes, 64).copyFrom(dst);
                            MemorySegment target = heap ? MemorySegment.ofArray(new byte[(int) bytes]).copyFrom(dst) : dst;
                            Reductions.combine(target, dOff, src, sOff, count, dt, op);
                            String where = dt + " " + op + " x " + count + (heap ? " heap" : " native");
                            for (long i = 0; i < count; i++) {
                                long want = reference(dt, op, get(before, dt, dOff, i), get(src, dt, sOff, i));
                                assertSameBits(dt, want, get(target, dt, dOff, i), where + " at " + i);
                            }
                            assertUntouchedOutside(before, target, dOff, count * dt.byteSize(), where);
                        }
                    }
                }
            }
        }
    }

    /** divide: every dtype and tail length, native and heap; integers truncate toward zero, bf16 rounds once. */
    @Test
    void divideMatchesScalarArithmeticBitForBit() {
        SplittableRandom random = new SplittableRandom(7);
        try (Arena arena = Arena.ofConfined()) {
            for (DataType dt : DataType.values()) {
                for (int count = 0; count <= MAX_COUNT; count++) {
                    for (boolean heap : new boolean[] {false, true}) {
                        int divisor = 1 + random.nextInt(7);
                        long off = dt.byteSize() * (long) random.nextInt(3) + (random.nextBoolean() ? 1 : 0);
                        long bytes = (count + 4L) * dt.byteSize();
                        MemorySegment seg = arena.allocate(bytes, 64);
                        randomBits(seg, random);
                        for (long i = 0; i < count; i++) {
                            set(seg, dt, off, i, randomValue(dt, random));
                        }
                        MemorySegment before = arena.allocate(bytes, 64).copyFrom(seg);
                        MemorySegment target = heap ? MemorySegment.ofArray(new byte[(int) bytes]).copyFrom(seg) : seg;
                        Reductions.divide(target, off, count, dt, divisor);
                        String where = dt + " / " + divisor + " x " + count + (heap ? " heap" : " native");
                        for (long i = 0; i < count; i++) {
                            long a = get(before, dt, off, i);
                            long want = switch (dt) {
                                case F32 -> Float.floatToRawIntBits(Float.intBitsToFloat((int) a) / divisor);
                                case F64 -> Double.doubleToRawLongBits(Double.longBitsToDouble(a) / divisor);
                                case I32 -> (int) a / divisor;
                                case I64 -> a / divisor;
                                case BF16 -> Reductions.floatToBf16(Reductions.bf16ToFloat((short) a) / divisor);
                            };
                            assertSameBits(dt, want, get(target, dt, off, i), where + " at " + i);
                        }
                        assertUntouchedOutside(before, target, off, count * dt.byteSize(), where);
                    }
                }
            }
        }
    }

    /**
     * min and max as Math.min and Math.max, in the vector lanes and the scalar tail alike: a NaN on either side wins,
     * and -0.0 is below 0.0.
     */
    @Test
    void minAndMaxTreatNaNAndSignedZeroAsMathMinAndMax() {
        double[][] pairs = {{Double.NaN, 1}, {1, Double.NaN}, {Double.NaN, Double.NaN}, {-0.0, 0.0}, {0.0, -0.0},
            {-0.0, -0.0}, {Double.NEGATIVE_INFINITY, Double.NaN}, {Double.POSITIVE_INFINITY, -0.0}, {-1, -0.0}};
        try (Arena arena = Arena.ofConfined()) {
            for (DataType dt : new DataType[] {DataType.F32, DataType.F64, DataType.BF16}) {
                for (ReduceOp op : new ReduceOp[] {ReduceOp.MAX, ReduceOp.MIN}) {
                    for (int count : new int[] {MAX_COUNT, 3}) {
                        MemorySegment dst = arena.allocate((long) count * dt.byteSize(), 64);
                        MemorySegment src = arena.allocate((long) count * dt.byteSize(), 64);
                        for (int i = 0; i < count; i++) {
                            double[] p = pairs[i % pairs.length];
                            Buffers.set(dst, dt, i, p[0]);
                            Buffers.set(src, dt, i, p[1]);
                        }
                        Reductions.combine(dst, 0, src, 0, count, dt, op);
                        for (int i = 0; i < count; i++) {
                            double[] p = pairs[i % pairs.length];
                            double want = op == ReduceOp.MAX ? Math.max(p[0], p[1]) : Math.min(p[0], p[1]);
                            double got = Buffers.get(dst, dt, i);
                            String where = dt + " " + op + " x " + count + " at " + i + ": " + p[0] + ", " + p[1];
                            // assertEquals on doubles compares bits: NaN equals NaN, -0.0 differs from 0.0
                            assertEquals(want, got, where);
                        }
                    }
                }
            }
        }
    }

    /**
     * bf16 combines in float and rounds the result to nearest even: a sum halfway between two bf16 values goes to the
     * even one, past halfway it goes up, and an overflowing sum becomes infinity; in the loop as in the conversion.
     */
    @Test
    void bf16CombineRoundsEachResultToNearestEven() {
        short one = 0x3F80;              // 1.0
        short oneUlp = 0x3F81;           // 1 + 2^-7, odd mantissa
        short twoUlps = 0x3F82;          // 1 + 2^-6
        short half = 0x3B80;             // 2^-8: half a bf16 ulp at 1.0
        short pastHalf = 0x3BA0;         // 2^-8 + 2^-10
        short maxFinite = 0x7F7F;
        short three = 0x4040;
        short[][] cases = {              // dst, src, op (ordinal), want
            {one, half, (short) ReduceOp.SUM.ordinal(), one},               // tie, to even
            {oneUlp, half, (short) ReduceOp.SUM.ordinal(), twoUlps},        // tie, to even (up)
            {one, pastHalf, (short) ReduceOp.SUM.ordinal(), oneUlp},        // past the tie: up
            {maxFinite, maxFinite, (short) ReduceOp.SUM.ordinal(), 0x7F80}, // overflows to +inf
            {oneUlp, three, (short) ReduceOp.PROD.ordinal(), 0x4042},       // 3 + 3 * 2^-7: tie, to even 3 + 2^-5
            {oneUlp, half, (short) ReduceOp.AVG.ordinal(), twoUlps},        // AVG combines as SUM
        };
        try (Arena arena = Arena.ofConfined()) {
            for (short[] c : cases) {
                for (int count : new int[] {1, MAX_COUNT}) {
                    MemorySegment dst = arena.allocate(2L * count, 64);
                    MemorySegment src = arena.allocate(2L * count, 64);
                    dst.fill((byte) 0);
                    for (int i = 0; i < count; i++) {
                        dst.setAtIndex(ValueLayout.JAVA_SHORT, i, c[0]);
                        src.setAtIndex(ValueLayout.JAVA_SHORT, i, c[1]);
                    }
                    ReduceOp op = ReduceOp.values()[c[2]];
                    Reductions.combine(dst, 0, src, 0, count, DataType.BF16, op);
                    for (int i = 0; i < count; i++) {
                        assertEquals(c[3], dst.getAtIndex(ValueLayout.JAVA_SHORT, i),
                                String.format("%04x %s %04x x %d at %d", c[0], op, c[1], count, i));
                    }
                }
            }
            MemorySegment nan = arena.allocate(2, 2);
            MemorySegment one1 = arena.allocate(2, 2);
            nan.set(ValueLayout.JAVA_SHORT, 0, Reductions.floatToBf16(Float.NaN));
            one1.set(ValueLayout.JAVA_SHORT, 0, one);
            Reductions.combine(nan, 0, one1, 0, 1, DataType.BF16, ReduceOp.SUM);
            assertTrue(Float.isNaN(Reductions.bf16ToFloat(nan.get(ValueLayout.JAVA_SHORT, 0))), "NaN + 1 stays NaN");
        }
    }

    private static long reference(DataType dt, ReduceOp op, long a, long b) {
        ReduceOp o = op == ReduceOp.AVG ? ReduceOp.SUM : op;
        return switch (dt) {
            case F32 -> Float.floatToRawIntBits((float) scalar(o, Float.intBitsToFloat((int) a), Float.intBitsToFloat((int) b), true));
            case BF16 -> Reductions.floatToBf16((float) scalar(o, Reductions.bf16ToFloat((short) a), Reductions.bf16ToFloat((short) b), true));
            case F64 -> Double.doubleToRawLongBits(scalar(o, Double.longBitsToDouble(a), Double.longBitsToDouble(b), false));
            case I32 -> switch (o) {
                case SUM, AVG -> (int) a + (int) b;
                case PROD -> (int) a * (int) b;
                case MAX -> Math.max((int) a, (int) b);
                case MIN -> Math.min((int) a, (int) b);
            };
            case I64 -> switch (o) {
                case SUM, AVG -> a + b;
                case PROD -> a * b;
                case MAX -> Math.max(a, b);
                case MIN -> Math.min(a, b);
            };
        };
    }

    /** In float when {@code single} (each step rounded to float, as float arithmetic does), else in double. */
    private static double scalar(ReduceOp op, double a, double b, boolean single) {
        if (single) {
            float x = (float) a;
            float y = (float) b;
            return switch (op) {
                case SUM, AVG -> x + y;
                case PROD -> x * y;
                case MAX -> Math.max(x, y);
                case MIN -> Math.min(x, y);
            };
        }
        return switch (op) {
            case SUM, AVG -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
        };
    }

    private static void assertSameBits(DataType dt, long want, long got, String where) {
        boolean nanWant = isNaN(dt, want);
        if (nanWant || isNaN(dt, got)) {
            assertTrue(nanWant && isNaN(dt, got), where + String.format(": want %x, got %x", want, got));
        } else {
            assertEquals(want, got, where + String.format(": want %x, got %x", want, got));
        }
    }

    private static boolean isNaN(DataType dt, long bits) {
        return switch (dt) {
            case F32 -> Float.isNaN(Float.intBitsToFloat((int) bits));
            case F64 -> Double.isNaN(Double.longBitsToDouble(bits));
            case BF16 -> Float.isNaN(Reductions.bf16ToFloat((short) bits));
            case I32, I64 -> false;
        };
    }

    private static void assertUntouchedOutside(MemorySegment before, MemorySegment after, long off, long len, String where) {
        assertEquals(-1, before.asSlice(0, off).mismatch(after.asSlice(0, off)), where + ": wrote before the range");
        assertEquals(-1, before.asSlice(off + len).mismatch(after.asSlice(off + len)), where + ": wrote past the range");
    }

    /** The element's bits, sign-extended (a bf16 as its short). */
    private static long get(MemorySegment s, DataType dt, long off, long i) {
        long at = off + i * dt.byteSize();
        return switch (dt) {
            case F32, I32 -> s.get(ValueLayout.JAVA_INT_UNALIGNED, at);
            case F64, I64 -> s.get(ValueLayout.JAVA_LONG_UNALIGNED, at);
            case BF16 -> s.get(ValueLayout.JAVA_SHORT_UNALIGNED, at);
        };
    }

    private static void set(MemorySegment s, DataType dt, long off, long i, long bits) {
        long at = off + i * dt.byteSize();
        switch (dt) {
            case F32, I32 -> s.set(ValueLayout.JAVA_INT_UNALIGNED, at, (int) bits);
            case F64, I64 -> s.set(ValueLayout.JAVA_LONG_UNALIGNED, at, bits);
            case BF16 -> s.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, (short) bits);
        }
    }

    /** A quarter special values (NaN, zeros of both signs, infinities, extremes), the rest random bits or numbers. */
    private static long randomValue(DataType dt, SplittableRandom r) {
        boolean special = r.nextInt(4) == 0;
        return switch (dt) {
            case F32 -> Float.floatToRawIntBits(special ? SPECIAL_F[r.nextInt(SPECIAL_F.length)]
                    : r.nextBoolean() ? Float.intBitsToFloat(r.nextInt()) : (float) r.nextGaussian());
            case BF16 -> special ? Reductions.floatToBf16(SPECIAL_F[r.nextInt(SPECIAL_F.length)])
                    : r.nextBoolean() ? (short) r.nextInt() : Reductions.floatToBf16((float) r.nextGaussian());
            case F64 -> Double.doubleToRawLongBits(special ? SPECIAL_D[r.nextInt(SPECIAL_D.length)]
                    : r.nextBoolean() ? Double.longBitsToDouble(r.nextLong()) : r.nextGaussian());
            case I32 -> special ? (int) SPECIAL_I[r.nextInt(SPECIAL_I.length)] : r.nextInt();
            case I64 -> special ? SPECIAL_I[r.nextInt(SPECIAL_I.length)] : r.nextLong();
        };
    }

    private static void randomBits(MemorySegment s, SplittableRandom r) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
        }
    }
}
