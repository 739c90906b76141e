package org.fleet4j.gpu;

import java.util.Map;

/** The environment settings of GPU memory, spelled as Paddle's flags so existing job scripts keep working. */
public final class MemoryFlags {
    public static final String FRACTION = "FLAGS_fraction_of_gpu_memory_to_use";

    private MemoryFlags() {
    }

    /** The share of each GPU's memory to reserve up front; 0 (the default) grows on demand. */
    public static double poolFraction(Map<String, String> env) {
        String value = env.get(FRACTION);
        if (value == null || value.isBlank()) {
            return 0;
        }
        try {
            double f = Double.parseDouble(value.trim());
            if (f >= 0 && f <= 1) {
                return f;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(FRACTION + "='" + value + "': expected a number in [0, 1], e.g. 0.9");
    }
}
