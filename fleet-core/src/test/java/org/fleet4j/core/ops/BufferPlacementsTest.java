package org.fleet4j.core.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

class BufferPlacementsTest {
    @Test
    void aPlacementGivesItsAllocatorsMemoryAndOnlyItsOwnPlacementsHoldIt() {
        List<String> asked = new ArrayList<>();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] last = new MemorySegment[1];
            BufferPlacements placements = BufferPlacements.of(Map.of("test:a", (name, bytes) -> {
                asked.add(name + " " + bytes);
                last[0] = arena.allocate(bytes, 4096);
                return last[0];
            }));
            Tensor t = placements.zeros("test:a", "bucket_0", DType.F64, 3, 5);
            assertEquals(List.of("bucket_0 120"), asked);
            assertEquals(last[0].address(), t.segment().address());
            assertEquals(0.0, t.getDouble(14));
            assertTrue(placements.holds(t));
            assertTrue(placements.holds(t.reshape(15).rows(4, 9)), "a view into placed memory is placed too");
            assertFalse(placements.holds(Tensor.zeros(DType.F64, 15)));
            assertFalse(BufferPlacements.NONE.holds(t), "another job's placements do not hold this job's memory");
        }
    }

    @Test
    void noPlacementOrAnUnknownOneIsOrdinaryMemory() {
        BufferPlacements placements = BufferPlacements.of(Map.of("test:a", (n, b) -> {
            throw new AssertionError("not asked");
        }));
        Tensor none = placements.zeros("", "b", DType.F32, 4);
        Tensor unknown = placements.zeros("test:nobody", "b", DType.F32, 4);
        assertEquals(4, none.numel());
        assertEquals(16, unknown.byteSize());
        assertFalse(placements.holds(none) || placements.holds(unknown));
    }

    @Test
    void anAllocatorThatGivesTheWrongSizeIsNamed() {
        try (Arena arena = Arena.ofShared()) {
            BufferPlacements placements = BufferPlacements.of(Map.of("test:short", (n, b) -> arena.allocate(b - 4, 64)));
            String msg = assertThrows(IllegalStateException.class,
                    () -> placements.zeros("test:short", "bucket_7", DType.F32, 8)).getMessage();
            assertTrue(msg.contains("'test:short'") && msg.contains("'bucket_7'") && msg.contains("28 bytes")
                    && msg.contains("expected 32"), msg);
        }
        assertThrows(IllegalArgumentException.class, () -> BufferPlacements.of(Map.of(" ", (n, b) -> null)));
    }
}
