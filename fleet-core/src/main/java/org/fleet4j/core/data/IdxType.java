package org.fleet4j.core.data;

import org.fleet4j.core.tensor.DType;

/**
 * Element types of the IDX format (the third byte of the magic number). Integers widen to int32 tensors,
 * since the tensor dtypes have no 8- or 16-bit integers.
 */
public enum IdxType {
    UBYTE(0x08, 1, DType.I32),
    BYTE(0x09, 1, DType.I32),
    SHORT(0x0B, 2, DType.I32),
    INT(0x0C, 4, DType.I32),
    FLOAT(0x0D, 4, DType.F32),
    DOUBLE(0x0E, 8, DType.F64);

    private final int code;
    private final int byteSize;
    private final DType tensorType;

    IdxType(int code, int byteSize, DType tensorType) {
        this.code = code;
        this.byteSize = byteSize;
        this.tensorType = tensorType;
    }

    public int code() {
        return code;
    }

    public int byteSize() {
        return byteSize;
    }

    /** The dtype of the tensor that {@link IdxReader} returns for this element type. */
    public DType tensorType() {
        return tensorType;
    }

    /** The type with this code, or null when the code is not an IDX type. */
    public static IdxType ofCode(int code) {
        for (IdxType t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        return null;
    }
}
