package org.fleet4j.collective;

import java.util.Locale;

/** Which transport a group uses. AUTO picks by locality: shm on one host, hierarchical or tcp across hosts. */
public enum Backend {
    AUTO,
    SHM,
    TCP,
    HIERARCHICAL;

    public static Backend parse(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown backend '" + name + "'; expected one of auto, shm, tcp, hierarchical");
        }
    }
}
