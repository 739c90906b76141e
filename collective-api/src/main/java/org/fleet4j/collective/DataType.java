package org.fleet4j.collective;

import java.util.Locale;
import org.fleet4j.text.Quoted;

/** Element types the collectives reduce and move. Kept apart from fleet-core's DType so this module stands alone. */
public enum DataType {
    F32(4),
    F64(8),
    I32(4),
    I64(8),
    BF16(2);

    private final int byteSize;

    DataType(int byteSize) {
        this.byteSize = byteSize;
    }

    public int byteSize() {
        return byteSize;
    }

    public String displayName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses "f32", "float32", "bf16", "int64" and the like. */
    public static DataType parse(String name) {
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "f32", "float32", "float", "fp32" -> F32;
            case "f64", "float64", "double", "fp64" -> F64;
            case "i32", "int32", "int" -> I32;
            case "i64", "int64", "long" -> I64;
            case "bf16", "bfloat16" -> BF16;
            default -> throw new IllegalArgumentException(
                    "unknown dtype " + Quoted.of(name) + "; expected one of f32, f64, i32, i64, bf16");
        };
    }
}
