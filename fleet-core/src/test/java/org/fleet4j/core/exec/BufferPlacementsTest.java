package org.fleet4j.core.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

class BufferPlacementsTest {
    @Test
    void aRegisteredPlacementGivesItsAllocatorsMemoryUntilItIsClosed() {
        List<String> asked = new ArrayList<>();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] last = new MemorySegment[1];
            BufferPlacements.Registration reg = BufferPlacements.register("test:a", (name, bytes) -> {
                asked.add(name + " " + bytes);
                last[0] = arena.allocate(bytes, 4096);
                return last[0];
            });
            Tensor t = BufferPlacements.zeros("test:a", "bucket_0", DType.F64, 3, 5);
            assertEquals(List.of("bucket_0 120"), asked);
            assertEquals(last[0].address(), t.segment().address());
            assertEquals(0.0, t.getDouble(14));
            assertTrue(BufferPlacements.holds(t));
            assertTrue(BufferPlacements.holds(t.reshape(15).rows(4, 9)), "a view into placed memory is placed too");
            assertFalse(BufferPlacements.holds(Tensor.zeros(DType.F64, 15)));
            reg.close();
            Tensor after = BufferPlacements.zeros("test:a", "bucket_1", DType.F64, 15);
            assertEquals(1, asked.size(), "a closed placement is ordinary memory again");
            assertFalse(BufferPlacements.holds(after));
        }
    }

    @Test
    void noPlacementOrAnUnknownOneIsOrdinaryMemory() {
        Tensor none = BufferPlacements.zeros("", "b", DType.F32, 4);
        Tensor unknown = BufferPlacements.zeros("test:nobody", "b", DType.F32, 4);
        assertEquals(4, none.numel());
        assertEquals(16, unknown.byteSize());
        assertFalse(BufferPlacements.holds(none) || BufferPlacements.holds(unknown));
    }

    @Test
    void anAllocatorThatGivesTheWrongSizeIsNamed() {
        try (Arena arena = Arena.ofShared();
             BufferPlacements.Registration reg = BufferPlacements.register("test:short", (n, b) -> arena.allocate(b - 4, 64))) {
            String msg = assertThrows(IllegalStateException.class,
                    () -> BufferPlacements.zeros("test:short", "bucket_7", DType.F32, 8)).getMessage();
            assertTrue(msg.contains("'test:short'") && msg.contains("'bucket_7'") && msg.contains("28 bytes")
                    && msg.contains("expected 32"), msg);
        }
        assertThrows(IllegalArgumentException.class, () -> BufferPlacements.register(" ", (n, b) -> null));
    }
}
