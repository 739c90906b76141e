package org.fleet4j.fleet.ops;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.fleet4j.collective.ProcessGroup;

/**
 * The process groups collective ops run on, by the {@code ring_id} attribute of the op. {@code Fleet} puts its rings
 * here ({@link OpenRings}) and removes them when it closes. A ring of which this rank is not a member (the leaders
 * ring of hierarchical allreduce on a rank that leads no node) is recorded as such, so ops can skip it.
 */
public final class Rings {
    private static final Map<Integer, ProcessGroup> GROUPS = new ConcurrentHashMap<>();
    private static final Map<Integer, String> NOT_MEMBER = new ConcurrentHashMap<>();

    private Rings() {
    }

    /** Registers a group under a ring id; fails if the id is taken, so two jobs in one JVM never share a ring by accident. */
    public static void put(int ringId, ProcessGroup group) {
        if (NOT_MEMBER.containsKey(ringId)) {
            throw new IllegalStateException("ring_id " + ringId + " is already taken (" + NOT_MEMBER.get(ringId)
                    + ", without this rank); close the Fleet that owns it first");
        }
        ProcessGroup before = GROUPS.putIfAbsent(ringId, group);
        if (before != null) {
            throw new IllegalStateException("ring_id " + ringId + " already holds process group '" + before.name()
                    + "'; close the Fleet that owns it first");
        }
    }

    /** Records that this rank is not a member of ring {@code ringId}, which {@code what} describes (its ranks). */
    public static void putNotMember(int ringId, String what) {
        if (GROUPS.containsKey(ringId) || NOT_MEMBER.putIfAbsent(ringId, what) != null) {
            throw new IllegalStateException("ring_id " + ringId + " is already taken; close the Fleet that owns it first");
        }
    }

    /** Removes the group at a ring id if it is this one. */
    public static void remove(int ringId, ProcessGroup group) {
        GROUPS.remove(ringId, group);
    }

    /** Removes the record that this rank is not a member of a ring. */
    public static void removeNotMember(int ringId) {
        NOT_MEMBER.remove(ringId);
    }

    /** Whether this rank takes part in ring {@code ringId}; fails as {@link #get} for a ring nobody opened. */
    public static boolean isMember(int ringId) {
        if (NOT_MEMBER.containsKey(ringId)) {
            return false;
        }
        get(ringId);
        return true;
    }

    public static ProcessGroup get(int ringId) {
        ProcessGroup g = GROUPS.get(ringId);
        if (g == null) {
            String notMember = NOT_MEMBER.get(ringId);
            if (notMember != null) {
                throw new IllegalStateException("this rank is not a member of ring_id " + ringId + " (" + notMember
                        + "); only its members run collectives on it");
            }
            throw new IllegalStateException("no process group at ring_id " + ringId + " (rings: "
                    + new TreeMap<>(GROUPS).keySet() + "); call Fleet.init before running programs with collective ops"
                    + " (it opens the rings that the strategy's nccl_comm_num and use_hierarchical_allreduce ask for), and"
                    + " compile with its layout, Pipeline.forStrategy(fleet.strategy(), fleet.ringLayout()): with "
                    + "FLEET_HIERARCHICAL_FORM=reduce it opens no cross rings for the reduce-scatter form");
        }
        return g;
    }
}
