package org.fleet4j.pserver.worker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** The worker's dedup of a batch's ids before a pull, and the merge of duplicate ids' gradients before a push. */
class SparseIdsTest {
    private static final Tensor IDS = Tensor.ofLongs(new long[]{7, 3, 7, -1, 1L << 40, 3, 7}, 7, 1);

    @Test
    void distinctIdsInOrderOfFirstAppearanceWithoutThePaddingId() {
        SparseIds d = SparseIds.of(IDS, -1);
        assertArrayEquals(new long[]{7, 3, 1L << 40}, d.unique().toLongArray());
        assertArrayEquals(new int[]{0, 1, 0, -1, 2, 1, 0}, d.index());
        SparseIds noPadding = SparseIds.of(IDS, -2);
        assertArrayEquals(new long[]{7, 3, -1, 1L << 40}, noPadding.unique().toLongArray());
    }

    @Test
    void gatherPutsEachRowBackAtEveryPositionOfItsIdAndZerosForPadding() {
        SparseIds d = SparseIds.of(IDS, -1);
        Tensor rows = Tensor.of(new float[]{70, 71, 30, 31, 40, 41}, 3, 2);
        Tensor out = Tensor.zeros(DType.F32, 7, 2);
        out.fill(9);
        d.gather(rows.segment(), out.segment(), 2);
        assertArrayEquals(new float[]{70, 71, 30, 31, 70, 71, 0, 0, 40, 41, 30, 31, 70, 71}, out.toFloatArray());
    }

    @Test
    void mergeSumsDuplicateIdsGradientsExactly() {
        SparseIds d = SparseIds.of(IDS, -1);
        // Integers and powers of two: every sum is exact in float32, so equality is the test.
        Tensor grads = Tensor.of(new float[]{1, 2, 10, 20, 100, 200, 1000, 2000, 0.5f, 0.25f, 30, 40, 4096, 8192}, 7, 2);
        Tensor sums = d.merge(grads.segment(), 2);
        assertArrayEquals(new long[]{3, 2}, sums.shape());
        assertArrayEquals(new float[]{1 + 100 + 4096, 2 + 200 + 8192, 10 + 30, 20 + 40, 0.5f, 0.25f},
                sums.toFloatArray());
    }

    @Test
    void manyIdsDedupAsAHashSetWould() {
        long[] ids = new long[5000];
        long[] expected = new long[1000];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = (i % 1000) * 0x1_0000_0001L;
        }
        for (int i = 0; i < expected.length; i++) {
            expected[i] = i * 0x1_0000_0001L;
        }
        SparseIds d = SparseIds.of(Tensor.ofLongs(ids, ids.length), -1);
        assertArrayEquals(expected, d.unique().toLongArray());
    }
}
