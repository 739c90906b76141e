package org.fleet4j.collective;

import java.util.Locale;

/**
 * A backend by name: "auto" (an option only: the available backend that ranks highest for the group's locality),
 * one of the host backends that the collective module's providers register (shm, tcp, hierarchical), or a device
 * backend (nccl). The set is open: a jar that registers a provider adds a name; a name no provider registers is
 * refused when a group is opened with it, naming the registered ones.
 */
public record Backend(String name) {
    public static final Backend AUTO = new Backend("auto");
    public static final Backend SHM = new Backend("shm");
    public static final Backend TCP = new Backend("tcp");
    public static final Backend HIERARCHICAL = new Backend("hierarchical");
    public static final Backend NCCL = new Backend("nccl");

    /** A backend name in any case and spacing. */
    public static Backend parse(String name) {
        return new Backend(name.trim().toLowerCase(Locale.ROOT));
    }

    @Override
    public String toString() {
        return name;
    }
}
