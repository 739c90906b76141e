package org.fleet4j.core.tensor;

import java.util.Locale;
import org.fleet4j.text.Quoted;

/** Element types a tensor can hold. f32 is the compute type; the rest are for labels, ids and storage. */
public enum DType {
    F32(4, "float32"),
    F64(8, "float64"),
    I32(4, "int32"),
    I64(8, "int64"),
    BF16(2, "bfloat16");

    private final int byteSize;
    private final String paddleName;

    DType(int byteSize, String paddleName) {
        this.byteSize = byteSize;
        this.paddleName = paddleName;
    }

    public int byteSize() {
        return byteSize;
    }

    /** The name users write in programs ("float32", "int64"); Paddle and numpy spell them the same way. */
    public String displayName() {
        return paddleName;
    }

    public boolean isFloating() {
        return this == F32 || this == F64 || this == BF16;
    }

    /** Parses "float32", "f32", "FP32", "int64", "bf16" and the like. */
    public static DType parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        return switch (n) {
            case "float32", "f32", "fp32", "float" -> F32;
            case "float64", "f64", "fp64", "double" -> F64;
            case "int32", "i32", "int" -> I32;
            case "int64", "i64", "long" -> I64;
            case "bfloat16", "bf16" -> BF16;
            default -> throw new IllegalArgumentException(
                    "unknown dtype " + Quoted.of(name) + "; expected one of float32, float64, int32, int64, bfloat16");
        };
    }
}
