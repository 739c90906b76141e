package org.fleet4j.core.data;

import org.fleet4j.core.tensor.OffHeapMemoryException;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Reads IDX files (the format of the MNIST database), gzipped or not: a 4-byte magic number (two zero bytes,
 * the element type, the number of dimensions), one big-endian int32 per dimension, then the elements in
 * big-endian row-major order. Compression is detected from the gzip magic bytes, not the file name.
 */
public final class IdxReader {
    private static final int CHUNK = 1 << 16;
    /** Deflate cannot expand data by more than about 1032:1, which bounds what a gzip file can hold. */
    private static final long MAX_DEFLATE_RATIO = 1032;
    private static final ValueLayout.OfInt INT_BE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT_BE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfDouble DOUBLE_BE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private IdxReader() {
    }

    /**
     * The file's elements as a tensor of the header's shape: ubyte, byte, short and int as int32, float as
     * float32, double as float64.
     *
     * @throws DataFormatException when the file is missing, unreadable, not IDX, or its length disagrees with its header
     */
    public static Tensor read(Path file) {
        if (!Files.exists(file)) {
            throw new DataFormatException(file, "IDX file does not exist");
        }
        if (!Files.isRegularFile(file)) {
            throw new DataFormatException(file, "is not a regular file; expected an IDX file");
        }
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(file), CHUNK)) {
            boolean gzip = startsWithGzipMagic(raw);
            try (InputStream in = gzip ? new GZIPInputStream(raw, CHUNK) : raw) {
                return decode(file, in, gzip, Files.size(file));
            }
        } catch (EOFException | ZipException e) {
            throw new DataFormatException(file, "gzip stream is truncated or corrupt (" + e.getMessage() + ")", e);
        } catch (IOException e) {
            throw new DataFormatException(file, "cannot be read: " + e, e);
        }
    }

    private static boolean startsWithGzipMagic(InputStream in) throws IOException {
        in.mark(2);
        int b0 = in.read();
        int b1 = in.read();
        in.reset();
        return b0 == 0x1f && b1 == 0x8b;
    }

    private static Tensor decode(Path file, InputStream in, boolean gzip, long fileSize) throws IOException {
        byte[] magic = in.readNBytes(4);
        if (magic.length < 4) {
            throw new DataFormatException(file, "has " + magic.length + " bytes, fewer than the 4-byte IDX magic number");
        }
        if (magic[0] != 0 || magic[1] != 0) {
            throw new DataFormatException(file, String.format(
                    "bad magic number 0x%02x%02x%02x%02x: an IDX file starts with two zero bytes, the element type"
                            + " and the number of dimensions", magic[0], magic[1], magic[2], magic[3]));
        }
        IdxType type = IdxType.ofCode(magic[2] & 0xFF);
        if (type == null) {
            throw new DataFormatException(file, String.format("unknown IDX element type 0x%02x; expected 0x08 ubyte,"
                    + " 0x09 byte, 0x0B short, 0x0C int, 0x0D float or 0x0E double", magic[2]));
        }
        int rank = magic[3] & 0xFF;
        if (rank == 0) {
            throw new DataFormatException(file, "header declares 0 dimensions; expected at least 1");
        }
        byte[] dims = in.readNBytes(4 * rank);
        if (dims.length < 4 * rank) {
            throw new DataFormatException(file, "header declares " + rank + " dimensions but the file ends after "
                    + dims.length + " of their " + 4 * rank + " size bytes");
        }
        long[] shape = new long[rank];
        MemorySegment dimSegment = MemorySegment.ofArray(dims);
        for (int d = 0; d < rank; d++) {
            shape[d] = Integer.toUnsignedLong(dimSegment.getAtIndex(INT_BE, d));
        }
        String what = type.name().toLowerCase() + " " + Shapes.str(shape);
        long expected;
        try {
            expected = Math.multiplyExact(Shapes.numel(shape), type.byteSize());
        } catch (ArithmeticException e) {
            throw new DataFormatException(file, "header declares " + what + ", too many elements to hold");
        }
        long headerBytes = 4L + 4L * rank;
        // Check what the file can hold before allocating, so that a corrupt header cannot ask for terabytes.
        if (!gzip && fileSize - headerBytes != expected) {
            throw lengthMismatch(file, expected, fileSize - headerBytes, what);
        }
        if (gzip && expected > fileSize * MAX_DEFLATE_RATIO) {
            throw new DataFormatException(file, "header declares " + what + " (" + expected + " bytes), more than a"
                    + " gzip file of " + fileSize + " bytes can hold");
        }
        Tensor tensor;
        try {
            tensor = Tensor.zeros(type.tensorType(), shape);
        } catch (OffHeapMemoryException e) {
            throw e.in("IDX file " + file);
        }
        byte[] buffer = new byte[CHUNK];
        long done = 0;
        while (done < expected) {
            int want = (int) Math.min(CHUNK, expected - done);
            int got = in.readNBytes(buffer, 0, want);
            decodeChunk(type, buffer, got / type.byteSize(), tensor.segment(), done / type.byteSize());
            done += got;
            if (got < want) {
                throw lengthMismatch(file, expected, done, what);
            }
        }
        long extra = in.transferTo(OutputStream.nullOutputStream());
        if (extra > 0) {
            throw lengthMismatch(file, expected, expected + extra, what);
        }
        return tensor;
    }

    private static DataFormatException lengthMismatch(Path file, long expected, long found, String what) {
        return new DataFormatException(file, "expected " + expected + " bytes of " + what + " data after the header, found "
                + found);
    }

    private static void decodeChunk(IdxType type, byte[] bytes, int count, MemorySegment out, long firstElement) {
        MemorySegment src = MemorySegment.ofArray(bytes);
        switch (type) {
            case UBYTE -> {
                for (int i = 0; i < count; i++) {
                    out.setAtIndex(ValueLayout.JAVA_INT, firstElement + i, bytes[i] & 0xFF);
                }
            }
            case BYTE -> {
                for (int i = 0; i < count; i++) {
                    out.setAtIndex(ValueLayout.JAVA_INT, firstElement + i, bytes[i]);
                }
            }
            case SHORT -> {
                for (int i = 0; i < count; i++) {
                    out.setAtIndex(ValueLayout.JAVA_INT, firstElement + i, (short) ((bytes[2 * i] << 8) | (bytes[2 * i + 1] & 0xFF)));
                }
            }
            // Copying between layouts of different byte order swaps the bytes.
            case INT -> MemorySegment.copy(src, INT_BE, 0, out, ValueLayout.JAVA_INT, firstElement * 4, count);
            case FLOAT -> MemorySegment.copy(src, FLOAT_BE, 0, out, ValueLayout.JAVA_FLOAT, firstElement * 4, count);
            case DOUBLE -> MemorySegment.copy(src, DOUBLE_BE, 0, out, ValueLayout.JAVA_DOUBLE, firstElement * 8, count);
        }
    }
}
