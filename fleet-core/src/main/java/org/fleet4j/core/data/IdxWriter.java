package org.fleet4j.core.data;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

/** Writes a tensor as an IDX file (see {@link IdxReader}), optionally gzipped. */
public final class IdxWriter {
    private IdxWriter() {
    }

    /**
     * Writes {@code tensor} with element type {@code type}. Integer types need an int32 or int64 tensor whose values
     * fit the type; float and double need a floating tensor.
     */
    public static void write(Path file, Tensor tensor, IdxType type, boolean gzip) {
        checkWritable(tensor, type);
        try (OutputStream raw = Files.newOutputStream(file);
             OutputStream maybeGzip = gzip ? new GZIPOutputStream(raw, 1 << 16) : raw;
             DataOutputStream out = new DataOutputStream(new BufferedOutputStream(maybeGzip, 1 << 16))) {
            out.writeShort(0);
            out.writeByte(type.code());
            out.writeByte(tensor.rank());
            for (long d : tensor.shape()) {
                out.writeInt((int) d);
            }
            for (long i = 0; i < tensor.numel(); i++) {
                switch (type) {
                    case UBYTE, BYTE -> out.writeByte((int) tensor.getLong(i));
                    case SHORT -> out.writeShort((int) tensor.getLong(i));
                    case INT -> out.writeInt((int) tensor.getLong(i));
                    case FLOAT -> out.writeFloat(tensor.getFloat(i));
                    case DOUBLE -> out.writeDouble(tensor.getDouble(i));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write IDX file " + file + ": " + e.getMessage(), e);
        }
    }

    private static void checkWritable(Tensor tensor, IdxType type) {
        if (tensor.rank() == 0 || tensor.rank() > 255) {
            throw new IllegalArgumentException("an IDX file holds 1 to 255 dimensions, not " + tensor.rank());
        }
        for (long d : tensor.shape()) {
            if (d > 0xFFFF_FFFFL) {
                throw new IllegalArgumentException("dimension " + d + " of " + tensor.describe() + " exceeds the IDX limit of 2^32-1");
            }
        }
        boolean integerType = type.tensorType() == DType.I32;
        boolean integerTensor = tensor.dtype() == DType.I32 || tensor.dtype() == DType.I64;
        if (integerType != integerTensor) {
            throw new IllegalArgumentException("IDX " + type.name().toLowerCase() + " needs " + (integerType ? "an integer"
                    : "a floating") + " tensor, got " + tensor.describe());
        }
        if (!integerType) {
            return;
        }
        long min = switch (type) {
            case UBYTE -> 0;
            case BYTE -> Byte.MIN_VALUE;
            case SHORT -> Short.MIN_VALUE;
            default -> Integer.MIN_VALUE;
        };
        long max = switch (type) {
            case UBYTE -> 255;
            case BYTE -> Byte.MAX_VALUE;
            case SHORT -> Short.MAX_VALUE;
            default -> Integer.MAX_VALUE;
        };
        for (long i = 0; i < tensor.numel(); i++) {
            long v = tensor.getLong(i);
            if (v < min || v > max) {
                throw new IllegalArgumentException("element " + i + " of " + tensor.describe() + " is " + v + ", outside IDX "
                        + type.name().toLowerCase() + " range [" + min + ", " + max + "] (shape " + Shapes.str(tensor.shape()) + ")");
            }
        }
    }
}
