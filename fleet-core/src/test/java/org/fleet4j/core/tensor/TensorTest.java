package org.fleet4j.core.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TensorTest {

    @Test
    void storageIsOffHeapAlignedAndZeroed() {
        Tensor t = Tensor.zeros(DType.F32, 3, 5);
        assertTrue(t.segment().isNative());
        assertEquals(0, t.segment().address() % Tensor.ALIGNMENT);
        assertEquals(60, t.byteSize());
        for (long i = 0; i < t.numel(); i++) {
            assertEquals(0f, t.getFloat(i));
        }
    }

    @Test
    void everyDtypeStoresItsValues() {
        assertArrayEquals(new double[]{1.5, -2.25}, Tensor.ofDoubles(new double[]{1.5, -2.25}).toDoubleArray());
        assertArrayEquals(new long[]{Long.MAX_VALUE, -3}, Tensor.ofLongs(new long[]{Long.MAX_VALUE, -3}).toLongArray());
        assertArrayEquals(new long[]{7, -8}, Tensor.ofInts(new int[]{7, -8}).toLongArray());
        Tensor bf = Tensor.zeros(DType.BF16, 3);
        bf.setFloat(0, 1.0f);
        bf.setFloat(1, 3.14159f);
        bf.setFloat(2, -1e30f);
        assertEquals(6, bf.byteSize());
        assertEquals(1.0f, bf.getFloat(0));
        assertEquals(3.140625f, bf.getFloat(1)); // 8 bits of mantissa, rounded to nearest even
        assertEquals(-1e30f, bf.getFloat(2), 1e28f);
    }

    @Test
    void bfloat16RoundsToNearestEvenAndKeepsSpecials() {
        assertEquals(1.0f, BFloat16.toFloat(BFloat16.fromFloat(1.00390625f))); // exactly half-way: stays even
        assertEquals(1.0078125f, BFloat16.toFloat(BFloat16.fromFloat(1.005859375f))); // above half-way: rounds up
        assertTrue(Float.isNaN(BFloat16.toFloat(BFloat16.fromFloat(Float.NaN))));
        assertEquals(Float.POSITIVE_INFINITY, BFloat16.toFloat(BFloat16.fromFloat(Float.POSITIVE_INFINITY)));
    }

    @Test
    void viewsShareStorage() {
        Tensor t = Tensor.of(new float[]{0, 1, 2, 3, 4, 5}, 3, 2);
        Tensor flat = t.reshape(-1);
        assertArrayEquals(new long[]{6}, flat.shape());
        flat.setFloat(5, 50);
        assertEquals(50f, t.get(2, 1));
        Tensor rows = t.rows(1, 3);
        assertArrayEquals(new long[]{2, 2}, rows.shape());
        assertEquals(2f, rows.get(0, 0));
        rows.set(20f, 0, 0);
        assertEquals(20f, t.get(1, 0));
        Tensor copy = t.copy();
        copy.setFloat(0, 99);
        assertEquals(0f, t.getFloat(0));
    }

    @Test
    void badShapesAndIndicesAreNamed() {
        var e = assertThrows(IllegalArgumentException.class, () -> Tensor.of(new float[]{1, 2, 3}, 2, 2));
        assertEquals("3 values do not fill shape [2, 2]", e.getMessage());
        var r = assertThrows(IllegalArgumentException.class, () -> Tensor.zeros(2, 3).reshape(4, -1));
        assertTrue(r.getMessage().contains("cannot reshape [2, 3] to [4, -1]"), r.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> Tensor.zeros(2, 3).get(2, 0));
        var c = assertThrows(IllegalArgumentException.class, () -> Tensor.zeros(2).copyFrom(Tensor.zeros(DType.I64, 2)));
        assertTrue(c.getMessage().contains("cannot copy int64[2] into float32[2]"), c.getMessage());
    }

    @Test
    void conversionBetweenDtypes() {
        Tensor f = Tensor.of(new float[]{1.7f, -2.2f});
        assertArrayEquals(new long[]{1, -2}, f.to(DType.I64).toLongArray());
        assertEquals(DType.F64, f.to(DType.F64).dtype());
        assertEquals(1.7f, f.to(DType.BF16).getFloat(0), 0.01f);
    }

    @Test
    void printsReadablySummarisingLongDimensions() {
        assertEquals("Tensor(float32[2, 2], [[1.0, 2.0],\n        [3.0, 4.5]])",
                Tensor.of(new float[]{1, 2, 3, 4.5f}, 2, 2).toString());
        assertEquals("Tensor(int64[10], [0, 1, 2, ..., 7, 8, 9])",
                Tensor.ofLongs(new long[]{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}).toString());
        assertEquals("Tensor(float32[], 2.5)", Tensor.scalar(2.5f).toString());
    }

    @Test
    void shapesBroadcastLikeNumpy() {
        assertArrayEquals(new long[]{4, 3}, Shapes.broadcast(new long[]{4, 3}, new long[]{3}));
        assertArrayEquals(new long[]{2, 4, 3}, Shapes.broadcast(new long[]{2, 1, 3}, new long[]{4, 1}));
        assertEquals(null, Shapes.broadcast(new long[]{4, 3}, new long[]{2}));
        assertArrayEquals(new long[]{2, 3, 4}, Shapes.resolveReshape(new long[]{2, 12}, new long[]{0, 3, -1}));
        assertEquals(DType.I64, DType.parse("int64"));
        assertThrows(IllegalArgumentException.class, () -> DType.parse("float8"));
    }

    @Test
    void knownNumelIsMinusOneOnlyForShapesWithARunTimeDimension() {
        assertEquals(24, Shapes.knownNumel(new long[]{2, 3, 4}));
        assertEquals(1, Shapes.knownNumel(new long[]{}));
        assertEquals(0, Shapes.knownNumel(new long[]{5, 0}));
        assertEquals(-1, Shapes.knownNumel(new long[]{-1, 784}));
        assertThrows(IllegalArgumentException.class, () -> Shapes.numel(new long[]{-1, 784}));
    }
}
