package org.fleet4j.core.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The dtypes other libraries write: F16 and U8 are read widened exactly, an unknown one is named. */
class SafeTensorsDTypesTest {
    @TempDir
    Path dir;

    @Test
    void halfPrecisionIsReadAsExactFloats() throws IOException {
        float subnormal = Float.float16ToFloat((short) 1);
        Path f = new RawSafeTensors().f16("h", new long[]{2, 3}, 1f, -0.5f, 65504f, subnormal, Float.POSITIVE_INFINITY, 0.1f)
                .write(dir.resolve("h.safetensors"));
        Tensor t = SafeTensors.read(f).get("h");
        assertEquals(DType.F32, t.dtype());
        assertArrayEquals(new long[]{2, 3}, t.shape());
        assertArrayEquals(new float[]{1f, -0.5f, 65504f, 5.9604645e-8f, Float.POSITIVE_INFINITY,
                Float.float16ToFloat(Float.floatToFloat16(0.1f))}, t.toFloatArray());
    }

    @Test
    void bytesAreReadAsUnsignedInts() throws IOException {
        Path f = new RawSafeTensors().add("u", "U8", new long[]{3}, b -> b.put((byte) 0).put((byte) 7).put((byte) 255))
                .write(dir.resolve("u.safetensors"));
        Tensor t = SafeTensors.read(f).get("u");
        assertEquals(DType.I32, t.dtype());
        assertArrayEquals(new long[]{0, 7, 255}, t.toLongArray());
    }

    @Test
    void everyWrittenDtypeReadsBack() {
        Path f = dir.resolve("all.safetensors");
        Map<String, Tensor> all = Map.of("f64", Tensor.ofDoubles(new double[]{0.1, -2}, 2), "i32", Tensor.ofInts(new int[]{-3, 4}, 2),
                "i64", Tensor.ofLongs(new long[]{1L << 40, -1}, 2), "bf16", Tensor.of(new float[]{1.5f, -2f}, 2).to(DType.BF16));
        SafeTensors.write(f, all, Map.of());
        Map<String, Tensor> read = SafeTensors.read(f);
        all.forEach((name, t) -> {
            assertEquals(t.dtype(), read.get(name).dtype(), name);
            assertArrayEquals(t.toDoubleArray(), read.get(name).toDoubleArray(), name);
        });
    }

    @Test
    void anUnknownDtypeIsNamedWithTheReadableOnes() throws IOException {
        Path f = new RawSafeTensors().add("q", "F8_E4M3", new long[]{1}, b -> b.put((byte) 0)).write(dir.resolve("q.safetensors"));
        CheckpointException e = assertThrows(CheckpointException.class, () -> SafeTensors.read(f));
        assertEquals("checkpoint " + f + ": q has dtype F8_E4M3; Fleet4J reads F16, BF16, F32, F64, U8, I32, I64", e.getMessage());
    }
}
