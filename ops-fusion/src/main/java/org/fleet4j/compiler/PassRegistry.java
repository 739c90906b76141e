package org.fleet4j.compiler;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.schema.KnobUse;

/**
 * The passes on the class path, by name and in order: every {@link PassDescription} that {@link ServiceLoader} finds.
 * The knobs of every registered pass are what the compiler declares it honours ({@link PassKnobs}).
 */
public final class PassRegistry {
    private static final Map<String, PassDescription> PASSES = load();

    private PassRegistry() {
    }

    private static Map<String, PassDescription> load() {
        List<PassDescription> found = new ArrayList<>();
        ServiceLoader.load(PassDescription.class, PassRegistry.class.getClassLoader()).forEach(found::add);
        found.sort(Comparator.comparingInt(PassDescription::order));
        Map<String, PassDescription> byName = new LinkedHashMap<>();
        PassDescription previous = null;
        for (PassDescription d : found) {
            if (byName.containsKey(d.name())) {
                throw new IllegalStateException("two passes are registered as '" + d.name() + "' ("
                        + byName.get(d.name()).getClass().getName() + ", " + d.getClass().getName() + ")");
            }
            if (previous != null && previous.order() == d.order()) {
                throw new IllegalStateException("passes " + previous.name() + " and " + d.name() + " both take order "
                        + d.order() + "; give each pass its own place");
            }
            byName.put(d.name(), d);
            previous = d;
        }
        return byName;
    }

    public static Set<String> names() {
        return Set.copyOf(PASSES.keySet());
    }

    /** Every registered pass, in pipeline order. */
    public static List<PassDescription> all() {
        return List.copyOf(PASSES.values());
    }

    /** The knobs the pass of this name declares it reads. */
    public static List<KnobUse> knobs(String name) {
        return description(name).knobs();
    }

    /** The knobs of every registered pass, in pipeline order. */
    public static List<KnobUse> knobs() {
        List<KnobUse> all = new ArrayList<>();
        PASSES.values().forEach(d -> all.addAll(d.knobs()));
        return all;
    }

    /** The pass of this name made from the context; fails naming the known passes. */
    public static Pass create(String name, PassContext context) {
        return description(name).create(context);
    }

    /** As {@link #create(String, PassContext)}, on the strategy's own ring layout. */
    public static Pass create(String name, EffectiveStrategy strategy) {
        return create(name, PassContext.of(strategy));
    }

    private static PassDescription description(String name) {
        PassDescription d = PASSES.get(name);
        if (d == null) {
            throw new IllegalArgumentException("no compiler pass named '" + name + "' (passes: " + PASSES.keySet() + ")");
        }
        return d;
    }
}
