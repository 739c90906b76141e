package org.fleet4j.collective;

import org.fleet4j.collective.reduce.Reductions;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Test buffers filled with small integers, so that sums and products are exact in every dtype, even bf16. */
final class Buffers {
    private Buffers() {
    }

    /** 1..4, different per rank and index. */
    static double value(int rank, long i) {
        return 1 + Math.floorMod(i * 31 + rank * 17L, 4);
    }

    static MemorySegment filled(Arena arena, DataType dt, long count, int rank) {
        MemorySegment s = arena.allocate(Math.max(1, count) * dt.byteSize(), 64).asSlice(0, count * dt.byteSize());
        for (long i = 0; i < count; i++) {
            set(s, dt, i, value(rank, i));
        }
        return s;
    }

    static void set(MemorySegment s, DataType dt, long i, double v) {
        switch (dt) {
            case F32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) v);
            case F64 -> s.setAtIndex(ValueLayout.JAVA_DOUBLE, i, v);
            case I32 -> s.setAtIndex(ValueLayout.JAVA_INT, i, (int) v);
            case I64 -> s.setAtIndex(ValueLayout.JAVA_LONG, i, (long) v);
            case BF16 -> s.setAtIndex(ValueLayout.JAVA_SHORT, i, Reductions.floatToBf16((float) v));
        }
    }

    static double get(MemorySegment s, DataType dt, long i) {
        return switch (dt) {
            case F32 -> s.getAtIndex(ValueLayout.JAVA_FLOAT, i);
            case F64 -> s.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
            case I32 -> s.getAtIndex(ValueLayout.JAVA_INT, i);
            case I64 -> s.getAtIndex(ValueLayout.JAVA_LONG, i);
            case BF16 -> Reductions.bf16ToFloat(s.getAtIndex(ValueLayout.JAVA_SHORT, i));
        };
    }

    /** The reduction of value(r, i) over ranks, rounded as the dtype stores it. */
    static double expected(DataType dt, ReduceOp op, int world, long i) {
        double acc = value(0, i);
        for (int r = 1; r < world; r++) {
            double v = value(r, i);
            acc = switch (op) {
                case SUM, AVG -> acc + v;
                case PROD -> acc * v;
                case MAX -> Math.max(acc, v);
                case MIN -> Math.min(acc, v);
            };
        }
        if (op == ReduceOp.AVG) {
            acc = switch (dt) {
                case I32, I64 -> Math.floor(acc / world);
                case F32 -> (float) acc / world;
                case BF16 -> Reductions.bf16ToFloat(Reductions.floatToBf16((float) acc / world));
                case F64 -> acc / world;
            };
        }
        return acc;
    }
}
