package org.fleet4j.core.tensor;

import java.util.Locale;

/** Byte counts as people read them in error messages and reports. */
public final class Bytes {
    private Bytes() {
    }

    public static String format(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.2f %s", v, units[u]);
    }
}
