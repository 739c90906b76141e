package org.fleet4j.core.data;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TensorDatasetTest {
    @Test
    void fieldsMustShareTheirRowCount() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new TensorDataset(List.of("x", "y"),
                List.of(Tensor.zeros(DType.F32, 4, 2), Tensor.zeros(DType.I64, 3, 1))));
        assertEquals("field 'y' is int64[3, 1]; every field needs a first dimension of 4 rows like 'x'", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new TensorDataset(List.of("x", "x"),
                List.of(Tensor.zeros(DType.F32, 4), Tensor.zeros(DType.F32, 4))));
        assertEquals("field 'x' is a scalar float32[]; a field needs a first dimension indexing the samples",
                assertThrows(IllegalArgumentException.class, () -> new TensorDataset(List.of("x"), List.of(Tensor.scalar(1)))).getMessage());
    }

    @Test
    void randomClassificationIsSeededAndInRange() {
        TensorDataset a = TensorDataset.randomClassification(5, 300, 7, 4);
        TensorDataset b = TensorDataset.randomClassification(5, 300, 7, 4);
        TensorDataset c = TensorDataset.randomClassification(6, 300, 7, 4);
        assertEquals(300, a.size());
        assertArrayEquals(new long[]{300, 7}, a.field("x").shape());
        assertArrayEquals(new long[]{300, 1}, a.field("label").shape());
        assertArrayEquals(a.field("x").toFloatArray(), b.field("x").toFloatArray());
        assertArrayEquals(a.field("label").toLongArray(), b.field("label").toLongArray());
        assertFalse(Arrays.equals(a.field("x").toFloatArray(), c.field("x").toFloatArray()));
        for (float v : a.field("x").toFloatArray()) {
            assertTrue(v >= -1 && v < 1, "x = " + v);
        }
        boolean[] seen = new boolean[4];
        for (long label : a.field("label").toLongArray()) {
            seen[(int) label] = true;
        }
        assertArrayEquals(new boolean[]{true, true, true, true}, seen);
    }

    @Test
    void loaderBatchesOneDimensionalFields() {
        Tensor ids = Tensor.ofInts(new int[]{10, 11, 12, 13, 14});
        DataLoader loader = DataLoader.builder(new TensorDataset(List.of("id"), List.of(ids)), 2).shard(1, 2).build();
        StringBuilder seen = new StringBuilder();
        for (Batch b : loader.epoch(0)) {
            seen.append(b.field("id").hasShape(b.size()) ? "" : "bad shape ").append(Arrays.toString(b.field(0).toLongArray()));
        }
        // Global batches [10, 11], [12, 13], [14]: rank 1 gets 11, 13 and an empty share of the last.
        assertEquals("[11][13][]", seen.toString());
    }
}
