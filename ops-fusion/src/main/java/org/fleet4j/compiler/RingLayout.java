package org.fleet4j.compiler;

import java.util.ArrayList;
import java.util.List;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * Which process group each {@code ring_id} of a compiled program names, so the compiler and Fleet (which opens the
 * groups) agree. Rings {@code 0..commNum-1} are flat groups of every rank (nccl_comm_num communicators; ring 0 is
 * the default group). With hierarchical allreduce ({@code innerRanks > 1}), channel c also has an inner ring
 * {@code commNum + c}, the {@code innerRanks} consecutive ranks that share this rank's node, and a leaders ring
 * {@code 2 * commNum + c}, the first rank of every inner group; a rank that leads no inner group is not a member of
 * the leaders rings. When the {@link HierarchicalForm} may split buckets by reduce-scatter ({@link #crossRings()}),
 * channel c also has a cross ring {@code 3 * commNum + c}: the ranks with this rank's index inside its node, one per
 * node.
 */
public record RingLayout(int commNum, int innerRanks, HierarchicalForm form) {
    /** The knobs {@link #of(EffectiveStrategy, HierarchicalForm)} reads. */
    public static final List<Field<?>> KNOBS = List.of(StrategySchema.NCCL_COMM_NUM,
            StrategySchema.USE_HIERARCHICAL_ALLREDUCE, StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS);

    public RingLayout {
        if (commNum < 1 || innerRanks < 1) {
            throw new IllegalArgumentException("ring layout needs at least one communicator and one rank per inner group:"
                    + " nccl_comm_num " + commNum + ", hierarchical_allreduce_inter_nranks " + innerRanks);
        }
        if (form == null) {
            throw new IllegalArgumentException("ring layout needs a hierarchical allreduce form (auto, reduce or rsag), got null");
        }
    }

    /** The layout with the {@link HierarchicalForm#AUTO} form. */
    public RingLayout(int commNum, int innerRanks) {
        this(commNum, innerRanks, HierarchicalForm.AUTO);
    }

    /** nccl_comm_num rings, and inner and leaders rings when use_hierarchical_allreduce is in effect. */
    public static RingLayout of(EffectiveStrategy s) {
        return of(s, HierarchicalForm.AUTO);
    }

    /** As {@link #of(EffectiveStrategy)}, with cross rings when {@code form} may use them. */
    public static RingLayout of(EffectiveStrategy s, HierarchicalForm form) {
        boolean hierarchical = s.get(StrategySchema.USE_HIERARCHICAL_ALLREDUCE);
        return new RingLayout(s.get(StrategySchema.NCCL_COMM_NUM),
                hierarchical ? s.get(StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS) : 1, form);
    }

    public boolean hierarchical() {
        return innerRanks > 1;
    }

    /** Whether the cross rings exist: hierarchical, and a form that may reduce-scatter. */
    public boolean crossRings() {
        return hierarchical() && form != HierarchicalForm.REDUCE;
    }

    public int flat(int channel) {
        return checked(channel);
    }

    public int inner(int channel) {
        return commNum + checked(channel);
    }

    public int leaders(int channel) {
        return 2 * commNum + checked(channel);
    }

    public int cross(int channel) {
        if (!crossRings()) {
            throw new IllegalStateException("no cross rings in this layout: " + (hierarchical()
                    ? "the hierarchical form is " + form.key() : "one rank per inner group"));
        }
        return 3 * commNum + checked(channel);
    }

    /** The ranks with the same index inside their inner group as {@code rank}, one per inner group, lowest first. */
    public List<Integer> crossMembers(int rank, int worldSize) {
        checkWorld(worldSize);
        List<Integer> members = new ArrayList<>();
        for (int r = rank % innerRanks; r < worldSize; r += innerRanks) {
            members.add(r);
        }
        return members;
    }

    /** The ranks of the inner group of {@code rank} in a world of {@code worldSize}, lowest (its leader) first. */
    public List<Integer> innerMembers(int rank, int worldSize) {
        checkWorld(worldSize);
        int first = rank / innerRanks * innerRanks;
        List<Integer> members = new ArrayList<>();
        for (int r = first; r < first + innerRanks; r++) {
            members.add(r);
        }
        return members;
    }

    /** The first rank of every inner group. */
    public List<Integer> leaderRanks(int worldSize) {
        checkWorld(worldSize);
        List<Integer> leaders = new ArrayList<>();
        for (int r = 0; r < worldSize; r += innerRanks) {
            leaders.add(r);
        }
        return leaders;
    }

    public boolean isLeader(int rank) {
        return rank % innerRanks == 0;
    }

    private void checkWorld(int worldSize) {
        if (worldSize % innerRanks != 0) {
            throw new IllegalArgumentException("hierarchical_allreduce_inter_nranks " + innerRanks
                    + " does not divide the world size " + worldSize + "; the strategy's validation should have said so");
        }
    }

    private int checked(int channel) {
        if (channel < 0 || channel >= commNum) {
            throw new IllegalArgumentException("communicator " + channel + " does not exist: nccl_comm_num is " + commNum);
        }
        return channel;
    }
}
