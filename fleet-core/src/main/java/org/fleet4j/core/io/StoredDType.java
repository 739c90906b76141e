package org.fleet4j.core.io;

import java.util.Arrays;
import java.util.stream.Collectors;
import org.fleet4j.core.tensor.DType;

/**
 * The element types a safetensors file may hold, by their header code. F16 and U8 have no tensor dtype of their own:
 * they are read widened, exactly, to F32 and I32 (e.g. a half-precision PyTorch checkpoint).
 */
enum StoredDType {
    F16(2, DType.F32),
    BF16(2, DType.BF16),
    F32(4, DType.F32),
    F64(8, DType.F64),
    U8(1, DType.I32),
    I32(4, DType.I32),
    I64(8, DType.I64);

    private final int byteSize;
    private final DType heldAs;

    StoredDType(int byteSize, DType heldAs) {
        this.byteSize = byteSize;
        this.heldAs = heldAs;
    }

    int byteSize() {
        return byteSize;
    }

    /** The tensor dtype the values are held in after reading. */
    DType heldAs() {
        return heldAs;
    }

    /** Whether reading converts the bytes rather than copying them. */
    boolean widens() {
        return byteSize != heldAs.byteSize();
    }

    /** The code a tensor of {@code dtype} is written with. */
    static StoredDType of(DType dtype) {
        return switch (dtype) {
            case F32 -> F32;
            case F64 -> F64;
            case I32 -> I32;
            case I64 -> I64;
            case BF16 -> BF16;
        };
    }

    /** The type a header code names, or null for a code Fleet4J cannot read. */
    static StoredDType parse(String code) {
        return Arrays.stream(values()).filter(d -> d.name().equals(code)).findFirst().orElse(null);
    }

    static String names() {
        return Arrays.stream(values()).map(Enum::name).collect(Collectors.joining(", "));
    }
}
