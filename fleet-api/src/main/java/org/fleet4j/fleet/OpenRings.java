package org.fleet4j.fleet;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.compiler.RingLayout;
import org.fleet4j.core.ops.ExecContext;

/**
 * The rings of one job as {@link RingLayout} lays them out, opened on every rank in one fixed order and handed to the
 * job's kernels through its {@link ExecContext} ({@link #addTo}): the default group at ring 0, a further group of all
 * ranks per extra communicator, and per communicator an inner group (this rank's node) and a leaders group (the first
 * rank of every inner group) for hierarchical allreduce, and a cross group (the ranks with this rank's index in their
 * node) when the layout's form may reduce-scatter. Closing closes all but the default group, which its opener owns.
 */
public final class OpenRings implements AutoCloseable {
    private final ProcessGroup defaultGroup;
    private final Map<Integer, ProcessGroup> groups = new LinkedHashMap<>();
    private final Map<Integer, String> notMember = new LinkedHashMap<>();

    private OpenRings(ProcessGroup defaultGroup) {
        this.defaultGroup = defaultGroup;
    }

    /** Opens the layout's rings around {@code defaultGroup} (ring 0); on failure closes what it opened and rethrows. */
    public static OpenRings open(RingLayout layout, ProcessGroup defaultGroup, GroupOptions options) {
        OpenRings rings = new OpenRings(defaultGroup);
        try {
            rings.add(layout.flat(0), defaultGroup);
            for (int c = 1; c < layout.commNum(); c++) {
                rings.add(layout.flat(c), defaultGroup.newGroup("ring" + c, options));
            }
            if (layout.hierarchical()) {
                int rank = defaultGroup.rank();
                int world = defaultGroup.size();
                List<Integer> leaders = layout.leaderRanks(world);
                for (int c = 0; c < layout.commNum(); c++) {
                    rings.add(layout.inner(c), defaultGroup.subgroup(ints(layout.innerMembers(rank, world))));
                    if (layout.isLeader(rank)) {
                        rings.add(layout.leaders(c), defaultGroup.subgroup(ints(leaders)));
                    } else {
                        String what = "the node leaders " + leaders + " of hierarchical allreduce, communicator " + c;
                        rings.notMember.put(layout.leaders(c), what);
                    }
                    if (layout.crossRings()) {
                        rings.add(layout.cross(c), defaultGroup.subgroup(ints(layout.crossMembers(rank, world))));
                    }
                }
            }
            return rings;
        } catch (RuntimeException e) {
            rings.close();
            throw e;
        }
    }

    private void add(int ringId, ProcessGroup group) {
        groups.put(ringId, group);
    }

    /** Gives {@code context} every ring: the groups of those this rank is a member of, and those it is not. */
    public ExecContext.Builder addTo(ExecContext.Builder context) {
        groups.forEach(context::ring);
        notMember.forEach(context::notMember);
        return context;
    }

    /** The group at ring {@code ringId}; only for rings this rank is a member of. */
    public ProcessGroup group(int ringId) {
        return groups.get(ringId);
    }

    private static int[] ints(List<Integer> ranks) {
        return ranks.stream().mapToInt(Integer::intValue).toArray();
    }

    /** One line per ring, by ring id: "ring 2: group 'default/[0,1]#1', shm, 2 ranks". */
    public String describe() {
        Map<Integer, String> lines = new TreeMap<>();
        groups.forEach((id, g) -> lines.put(id, "  ring " + id + ": group '" + g.name() + "', "
                + g.backend().name().toLowerCase(Locale.ROOT) + ", " + g.size() + (g.size() == 1 ? " rank" : " ranks")));
        notMember.forEach((id, what) -> lines.put(id, "  ring " + id + ": " + what + " (this rank is not a member)"));
        return "fleet: " + lines.size() + (lines.size() == 1 ? " ring" : " rings") + " open on rank " + defaultGroup.rank()
                + "\n" + String.join("\n", lines.values());
    }

    @Override
    public void close() {
        List<ProcessGroup> opened = new ArrayList<>(groups.values());
        for (int i = opened.size() - 1; i >= 0; i--) {
            if (opened.get(i) != defaultGroup) {
                opened.get(i).close();
            }
        }
    }
}
