package org.fleet4j.collective;

import java.util.Locale;

/**
 * A backend by name: "auto" (an option only: shm on one host, hierarchical or tcp across hosts), one of the host
 * backends that {@link BackendProvider}s register (shm, tcp, hierarchical), or a device backend that a
 * {@link DeviceBackendProvider} registers (nccl). The set is open: a jar that registers a provider adds a name.
 */
public record Backend(String name) {
    public static final Backend AUTO = new Backend("auto");
    public static final Backend SHM = new Backend("shm");
    public static final Backend TCP = new Backend("tcp");
    public static final Backend HIERARCHICAL = new Backend("hierarchical");
    public static final Backend NCCL = new Backend("nccl");

    /** "auto" or the name of a registered host backend, in any case. */
    public static Backend parse(String name) {
        String key = name.trim().toLowerCase(Locale.ROOT);
        if (key.equals(AUTO.name)) {
            return AUTO;
        }
        return Backends.host(new Backend(key)).backend();
    }

    @Override
    public String toString() {
        return name;
    }
}
