package org.fleet4j.strategy;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.strategy.schema.StrategySchema;
import org.fleet4j.text.Quoted;

/**
 * An immutable copy of every field's value (defaults filled in), for the compiler and the runtime:
 * later changes to the {@link DistributedStrategy} it came from do not reach it.
 */
public final class StrategySnapshot {
    private final Map<Field<?>, Object> values;

    public StrategySnapshot(Map<Field<?>, Object> values) {
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    @SuppressWarnings("unchecked")
    public <T> T get(Field<T> field) {
        return (T) values.get(field);
    }

    /** The value of the field with this key or alias. */
    public Object get(String keyOrAlias) {
        return values.get(StrategySchema.find(keyOrAlias).orElseThrow(() -> new StrategyException(
                "unknown key " + Quoted.of(keyOrAlias) + "; " + StrategySchema.unknownKeyHint(keyOrAlias))));
    }

    /** Every field and its value, in schema order. */
    public Map<Field<?>, Object> values() {
        return values;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof StrategySnapshot s && s.values.equals(values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }
}
