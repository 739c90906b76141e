package org.fleet4j.core.amp;

import java.util.Locale;

/** The reduced precision white-listed ops compute in. bf16 has fp32's range, so it needs no loss scaling. */
public enum AmpDtype {
    FP16,
    BF16;

    public static AmpDtype parse(String name) {
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "float16", "fp16", "half" -> FP16;
            case "bfloat16", "bf16" -> BF16;
            default -> throw new IllegalArgumentException("amp dtype '" + name + "': expected float16 or bfloat16");
        };
    }
}
