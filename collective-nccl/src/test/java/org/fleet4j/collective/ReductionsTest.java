package org.fleet4j.collective;

import org.fleet4j.collective.reduce.Reductions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The vector loops and their scalar tails agree with plain arithmetic, on native and heap segments alike. */
class ReductionsTest {
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
}
