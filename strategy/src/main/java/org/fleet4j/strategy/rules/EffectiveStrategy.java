package org.fleet4j.strategy.rules;

import java.util.ArrayList;
import java.util.List;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.StrategySnapshot;
import org.fleet4j.strategy.schema.Field;

/**
 * What will really run: the requested strategy after the rules of the world it runs on, with a
 * reason for every change and a warning for every setting that will not act as asked.
 */
public final class EffectiveStrategy {
    private final DistributedStrategy requested;
    private final World world;
    private final StrategySnapshot values;
    private final List<Change> changes;
    private final List<StrategyWarning> warnings;

    private EffectiveStrategy(DistributedStrategy requested, World world, WorldRules rules,
                              List<StrategyWarning> warnings) {
        this.requested = requested;
        this.world = world;
        this.values = new StrategySnapshot(rules.values());
        this.changes = List.copyOf(rules.changes());
        this.warnings = List.copyOf(warnings);
    }

    /**
     * Resolves the strategy for the world.
     *
     * @throws StrategyException if the strategy contradicts itself or the world, naming every problem
     */
    public static EffectiveStrategy resolve(DistributedStrategy strategy, World world) {
        strategy.validate();
        return new EffectiveStrategy(strategy, world, WorldRules.apply(strategy, world),
                WarningRules.warnings(strategy, world));
    }

    public World world() {
        return world;
    }

    public <T> T get(Field<T> field) {
        return values.get(field);
    }

    /** Every field's effective value: what the compiler and the runtime use. */
    public StrategySnapshot snapshot() {
        return values;
    }

    /** The values the world's rules changed, in the order the rules ran. */
    public List<Change> changes() {
        return changes;
    }

    public List<StrategyWarning> warnings() {
        return warnings;
    }

    /** Where the effective value came from: "default", "code", "file:LINE" (or "file") or "rule". */
    public String source(Field<?> field) {
        if (changes.stream().anyMatch(c -> c.key().equals(field.key()))) {
            return "rule";
        }
        return requested.origin(field).map(o -> !o.fromFile() ? "code" : o.line() > 0 ? "file:" + o.line() : "file")
                .orElse("default");
    }

    /** The short note the table shows next to a field: rule and warning labels, empty when none. */
    public String note(Field<?> field) {
        List<String> labels = new ArrayList<>();
        if (changes.stream().anyMatch(c -> c.key().equals(field.key()))) {
            labels.add("changed by rule");
        }
        warnings.stream().filter(w -> w.key().equals(field.key())).map(w -> w.kind().label()).distinct().forEach(labels::add);
        return String.join("; ", labels);
    }
}
