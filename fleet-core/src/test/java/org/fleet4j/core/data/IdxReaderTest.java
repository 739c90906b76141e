package org.fleet4j.core.data;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPOutputStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IdxReaderTest {
    @TempDir
    Path dir;

    /** Values at the edges of each type's range, so sign handling and byte order are exercised. */
    private static Tensor sample(IdxType type) {
        long[] shape = {2, 3, 4};
        return switch (type) {
            case UBYTE -> Tensor.ofInts(fillInts(24, 0, 255, 1, 128, 254, 17), shape);
            case BYTE -> Tensor.ofInts(fillInts(24, -128, 127, -1, 0, 1, 100), shape);
            case SHORT -> Tensor.ofInts(fillInts(24, Short.MIN_VALUE, Short.MAX_VALUE, -1, 256, 255, -300), shape);
            case INT -> Tensor.ofInts(fillInts(24, Integer.MIN_VALUE, Integer.MAX_VALUE, -1, 1 << 24, 65536, -7), shape);
            case FLOAT -> Tensor.of(new float[]{0f, -0f, 1.5f, -2.25f, Float.MAX_VALUE, Float.MIN_VALUE, Float.NaN,
                    Float.POSITIVE_INFINITY, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 0.1f}, shape);
            case DOUBLE -> Tensor.ofDoubles(new double[]{0, -0.0, 1e300, -1e-300, Math.PI, Double.NaN,
                    Double.NEGATIVE_INFINITY, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 0.1}, shape);
        };
    }

    private static int[] fillInts(int n, int... head) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = i < head.length ? head[i] : head[i % head.length] / 2;
        }
        return out;
    }

    @ParameterizedTest
    @EnumSource(IdxType.class)
    void roundTripsEveryElementTypeGzippedOrNot(IdxType type) {
        Tensor original = sample(type);
        for (boolean gzip : new boolean[]{false, true}) {
            Path file = dir.resolve(type + (gzip ? ".idx.gz" : ".idx"));
            IdxWriter.write(file, original, type, gzip);
            Tensor read = IdxReader.read(file);
            assertEquals(type.tensorType(), read.dtype());
            assertArrayEquals(new long[]{2, 3, 4}, read.shape());
            if (type.tensorType() == DType.I32) {
                assertArrayEquals(original.toLongArray(), read.toLongArray(), type + " gzip=" + gzip);
            } else {
                // Bitwise, so NaN and -0.0 count too.
                for (long i = 0; i < original.numel(); i++) {
                    assertEquals(Double.doubleToRawLongBits(original.getDouble(i)), Double.doubleToRawLongBits(read.getDouble(i)),
                            type + " element " + i);
                }
            }
        }
    }

    @Test
    void writesTheStandardBigEndianLayout() throws IOException {
        Path file = dir.resolve("labels");
        IdxWriter.write(file, Tensor.ofInts(new int[]{7, 2, 1}, 3), IdxType.UBYTE, false);
        assertArrayEquals(new byte[]{0, 0, 0x08, 1, 0, 0, 0, 3, 7, 2, 1}, Files.readAllBytes(file));
        Path shorts = dir.resolve("shorts");
        IdxWriter.write(shorts, Tensor.ofInts(new int[]{0x0102, -2}, 1, 2), IdxType.SHORT, false);
        assertArrayEquals(new byte[]{0, 0, 0x0B, 2, 0, 0, 0, 1, 0, 0, 0, 2, 1, 2, (byte) 0xFF, (byte) 0xFE},
                Files.readAllBytes(shorts));
    }

    @Test
    void detectsGzipByMagicBytesNotByName() throws IOException {
        Tensor t = Tensor.ofInts(new int[]{1, 2, 3, 4}, 2, 2);
        Path gzipNamedPlain = dir.resolve("data.idx");
        IdxWriter.write(gzipNamedPlain, t, IdxType.INT, true);
        Path plainNamedGzip = dir.resolve("data.idx.gz");
        IdxWriter.write(plainNamedGzip, t, IdxType.INT, false);
        assertEquals(0x1f, Files.readAllBytes(gzipNamedPlain)[0] & 0xFF);
        assertArrayEquals(t.toLongArray(), IdxReader.read(gzipNamedPlain).toLongArray());
        assertArrayEquals(t.toLongArray(), IdxReader.read(plainNamedGzip).toLongArray());
    }

    @Test
    void missingFileIsNamed() {
        Path missing = dir.resolve("nope-idx3-ubyte");
        DataFormatException e = assertThrows(DataFormatException.class, () -> IdxReader.read(missing));
        assertEquals(missing + ": IDX file does not exist", e.getMessage());
    }

    @Test
    void truncatedDataSaysHowManyBytesWereExpectedAndFound() throws IOException {
        Path file = dir.resolve("images");
        IdxWriter.write(file, Tensor.zeros(DType.I32, 10, 28, 28), IdxType.UBYTE, false);
        byte[] all = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(all, 16 + 1000));
        DataFormatException e = assertThrows(DataFormatException.class, () -> IdxReader.read(file));
        assertEquals(file + ": expected 7840 bytes of ubyte [10, 28, 28] data after the header, found 1000", e.getMessage());
    }

    @Test
    void trailingBytesAreAnError() throws IOException {
        Path file = dir.resolve("labels");
        Files.write(file, new byte[]{0, 0, 0x08, 1, 0, 0, 0, 2, 5, 6, 7});
        DataFormatException e = assertThrows(DataFormatException.class, () -> IdxReader.read(file));
        assertEquals(file + ": expected 2 bytes of ubyte [2] data after the header, found 3", e.getMessage());
    }

    @Test
    void wrongLengthInsideGzipIsFound() throws IOException {
        Path file = dir.resolve("labels.gz");
        Files.write(file, gzip(new byte[]{0, 0, 0x0C, 1, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0}));
        DataFormatException e = assertThrows(DataFormatException.class, () -> IdxReader.read(file));
        assertEquals(file + ": expected 16 bytes of int [4] data after the header, found 10", e.getMessage());
    }

    @Test
    void truncatedGzipStreamIsNamed() throws IOException {
        Path file = dir.resolve("images.gz");
        Tensor t = Tensor.zeros(DType.I32, 50, 28, 28);
        for (long i = 0; i < t.numel(); i++) {
            t.setLong(i, (i * 31) % 256);
        }
        IdxWriter.write(file, t, IdxType.UBYTE, true);
        byte[] all = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(all, all.length / 2));
        DataFormatException e = assertThrows(DataFormatException.class, () -> IdxReader.read(file));
        assertTrue(e.getMessage().startsWith(file + ": gzip stream is truncated or corrupt"), e.getMessage());
    }

    @Test
    void badMagicNumberIsNamed() throws IOException {
        Path file = dir.resolve("not-idx");
        Files.writeString(file, "PK\u0003\u0004 a zip, not IDX");
        DataFormatException e = assertThrows(DataFormatException.class, () -> IdxReader.read(file));
        assertTrue(e.getMessage().startsWith(file + ": bad magic number 0x504b0304"), e.getMessage());
    }

    @Test
    void unknownElementTypeIsNamed() throws IOException {
        Path file = dir.resolve("odd-type");
        Files.write(file, new byte[]{0, 0, 0x0A, 1, 0, 0, 0, 1, 0});
        DataFormatException e = assertThrows(DataFormatException.class, () -> IdxReader.read(file));
        assertTrue(e.getMessage().startsWith(file + ": unknown IDX element type 0x0a"), e.getMessage());
    }

    @Test
    void shortHeaderAndEmptyFileAreNamed() throws IOException {
        Path header = dir.resolve("short-header");
        Files.write(header, new byte[]{0, 0, 0x08, 3, 0, 0, 0, 9, 0, 0});
        assertEquals(header + ": header declares 3 dimensions but the file ends after 6 of their 12 size bytes",
                assertThrows(DataFormatException.class, () -> IdxReader.read(header)).getMessage());
        Path empty = Files.createFile(dir.resolve("empty"));
        assertEquals(empty + ": has 0 bytes, fewer than the 4-byte IDX magic number",
                assertThrows(DataFormatException.class, () -> IdxReader.read(empty)).getMessage());
    }

    @Test
    void impossibleSizeInGzipHeaderFailsBeforeAllocating() throws IOException {
        Path file = dir.resolve("huge.gz");
        Files.write(file, gzip(new byte[]{0, 0, 0x0E, 2, 0x7F, -1, -1, -1, 0x7F, -1, -1, -1}));
        DataFormatException e = assertThrows(DataFormatException.class, () -> IdxReader.read(file));
        assertTrue(e.getMessage().contains("double [2147483647, 2147483647]"), e.getMessage());
    }

    @Test
    void writerRejectsValuesOutsideTheType() {
        Path file = dir.resolve("x");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> IdxWriter.write(file, Tensor.ofInts(new int[]{3, 256}, 2), IdxType.UBYTE, false));
        assertTrue(e.getMessage().contains("element 1 of int32[2] is 256, outside IDX ubyte range [0, 255]"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> IdxWriter.write(file, Tensor.of(new float[]{1f}, 1), IdxType.INT, false));
    }

    private static byte[] gzip(byte[] bytes) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(bytes);
        }
        return out.toByteArray();
    }
}
