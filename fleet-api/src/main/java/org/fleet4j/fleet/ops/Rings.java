package org.fleet4j.fleet.ops;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.fleet4j.collective.ProcessGroup;

/**
 * The process groups collective ops run on, by the {@code ring_id} attribute of the op. {@code Fleet} puts its
 * default group at ring 0 and removes it when it closes.
 */
public final class Rings {
    private static final Map<Integer, ProcessGroup> GROUPS = new ConcurrentHashMap<>();

    private Rings() {
    }

    /** Registers a group under a ring id; fails if the id is taken, so two jobs in one JVM never share a ring by accident. */
    public static void put(int ringId, ProcessGroup group) {
        ProcessGroup before = GROUPS.putIfAbsent(ringId, group);
        if (before != null) {
            throw new IllegalStateException("ring_id " + ringId + " already holds process group '" + before.name()
                    + "'; close the Fleet that owns it first");
        }
    }

    /** Removes the group at a ring id if it is this one. */
    public static void remove(int ringId, ProcessGroup group) {
        GROUPS.remove(ringId, group);
    }

    public static ProcessGroup get(int ringId) {
        ProcessGroup g = GROUPS.get(ringId);
        if (g == null) {
            throw new IllegalStateException("no process group at ring_id " + ringId + " (rings: "
                    + new TreeMap<>(GROUPS).keySet() + "); call Fleet.init before running programs with collective ops");
        }
        return g;
    }
}
