package org.fleet4j.core.kernel;

import java.util.Locale;

/** The kinds of device a kernel runs on. The CPU's kernels are those of the ops' own specs. */
public enum DeviceKind {
    CPU,
    GPU;

    /** "cpu" or "gpu", as FLEET_DEVICE and the dry run spell it. */
    public String displayName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** "cpu", "gpu" or "cuda" in any case. */
    public static DeviceKind parse(String name) {
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "cpu" -> CPU;
            case "gpu", "cuda" -> GPU;
            default -> throw new IllegalArgumentException("unknown device kind '" + name + "'; expected cpu or gpu");
        };
    }
}
