package org.fleet4j.compiler;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.Field;

/**
 * What a pass is made from: the effective strategy's knobs, the ring layout the job's process groups follow, and the
 * world. Passes read knobs only through {@link #knob}, which notes each one read, so a test can hold the knobs a pass
 * declares ({@link PassRegistry#knobs}) against the ones it really reads.
 */
public final class PassContext {
    private final EffectiveStrategy strategy;
    private final RingLayout rings;
    private final Set<Field<?>> read = ConcurrentHashMap.newKeySet();

    private PassContext(EffectiveStrategy strategy, RingLayout rings) {
        if (strategy == null || rings == null) {
            throw new IllegalArgumentException("a pass context needs an effective strategy and a ring layout (got null)");
        }
        this.strategy = strategy;
        this.rings = rings;
    }

    /** The strategy with the ring layout it describes by itself (no hierarchical form from the environment). */
    public static PassContext of(EffectiveStrategy strategy) {
        return new PassContext(strategy, RingLayout.of(strategy));
    }

    /** The strategy with the rings that Fleet opened ({@code rings} carries the hierarchical form it was told). */
    public static PassContext of(EffectiveStrategy strategy, RingLayout rings) {
        return new PassContext(strategy, rings);
    }

    public <T> T knob(Field<T> field) {
        read.add(field);
        return strategy.get(field);
    }

    /** The rings, made from {@link RingLayout#KNOBS}: asking for them reads those knobs. */
    public RingLayout rings() {
        read.addAll(RingLayout.KNOBS);
        return rings;
    }

    public World world() {
        return strategy.world();
    }

    /** The knobs read through this context so far. */
    Set<Field<?>> knobsRead() {
        return Set.copyOf(read);
    }
}
