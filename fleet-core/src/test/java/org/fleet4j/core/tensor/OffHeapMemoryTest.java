package org.fleet4j.core.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A tensor beyond the JVM's off-heap limit is refused with the bytes, the limit and the way to raise it. */
class OffHeapMemoryTest {
    @Test
    void aTensorBeyondTheLimitSaysWhatItAskedTheLimitAndTheFlag() {
        long limit = OffHeapMemory.limit();
        long rows = limit / 4 / 1024 + 1;
        OffHeapMemoryException e = assertThrows(OffHeapMemoryException.class, () -> Tensor.zeros(DType.F32, rows, 1024));
        long bytes = rows * 1024 * 4;
        assertEquals(bytes, e.bytes());
        assertEquals(limit, e.limit());
        String m = e.getMessage();
        assertTrue(m.startsWith("cannot allocate " + Bytes.format(bytes) + " (" + bytes + " bytes) for a tensor float32["
                + rows + ", 1024]: the off-heap limit is " + Bytes.format(limit) + " (" + limit + " bytes)"), m);
        assertTrue(m.contains(OffHeapMemory.LIMIT_FLAG), m);
        assertFalse(m.contains("\n"), "one line: " + m);
    }

    @Test
    void callersThatKnowMoreNameTheOpAndTheVarInFront() {
        OffHeapMemoryException e = assertThrows(OffHeapMemoryException.class,
                () -> Tensor.zeros(DType.F64, OffHeapMemory.limit() / 8 + 1));
        String m = e.in("output 'h'").in("op #3 matmul").getMessage();
        assertTrue(m.startsWith("op #3 matmul, output 'h': cannot allocate "), m);
        assertTrue(e.in("x").getCause() instanceof OutOfMemoryError, "the JVM's error stays the cause, for --log_level debug");
    }
}
