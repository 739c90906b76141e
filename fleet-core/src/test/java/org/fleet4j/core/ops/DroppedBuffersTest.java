package org.fleet4j.core.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

class DroppedBuffersTest {
    @Test
    void aDroppedBufferComesBackForAnOutputOfTheSameByteSizeOnlyOnce() {
        DroppedBuffers buffers = new DroppedBuffers();
        Tensor a = Tensor.zeros(DType.F32, 4, 8);

        buffers.give(List.of(a), List.of());

        assertNull(buffers.take(DType.F32, 4, 9), "another size");
        Tensor again = buffers.take(DType.I32, 32);
        assertNotNull(again);
        assertEquals(a.segment().address(), again.segment().address());
        assertEquals(DType.I32, again.dtype());
        assertNull(buffers.take(DType.F32, 4, 8), "handed out once");
    }

    @Test
    void storageUnderTwoNamesIsHandedOutOnce() {
        DroppedBuffers buffers = new DroppedBuffers();
        Tensor a = Tensor.zeros(DType.F32, 16);
        Tensor view = Tensor.wrap(DType.F32, a.segment(), 4, 4);

        buffers.give(List.of(a, view), List.of());

        assertNotNull(buffers.take(DType.F32, 16));
        assertNull(buffers.take(DType.F32, 16));
    }

    @Test
    void storageThatOverlapsAnotherValueIsNeverHandedOut() {
        DroppedBuffers buffers = new DroppedBuffers();
        Tensor bucket = Tensor.zeros(DType.F32, 64);
        Tensor part = Tensor.wrap(DType.F32, bucket.segment().asSlice(0, 32 * 4), 32);
        Tensor fed = Tensor.zeros(DType.F32, 8);
        Tensor inPlaceOverFed = Tensor.wrap(DType.F32, fed.segment(), 8);
        Tensor alone = Tensor.zeros(DType.F32, 5);

        buffers.give(List.of(bucket, part, inPlaceOverFed, alone), List.of(fed));

        assertNull(buffers.take(DType.F32, 64), "a bucket with a view inside");
        assertNull(buffers.take(DType.F32, 32), "a view inside a bucket");
        assertNull(buffers.take(DType.F32, 8), "the storage of a fed tensor");
        assertNotNull(buffers.take(DType.F32, 5));
    }
}
