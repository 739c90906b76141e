package org.fleet4j.strategy.schema;

import java.util.Objects;
import java.util.function.Predicate;

/**
 * One knob that a part of the runtime reads, and the values it acts on ({@code amp_configs.dtype} only for bfloat16;
 * most knobs for every value). {@code values} names them for the reader of a report.
 */
public record KnobUse(Field<?> field, Predicate<Object> honours, String values) {
    public KnobUse {
        Objects.requireNonNull(field, "field");
        Objects.requireNonNull(honours, "honours");
        Objects.requireNonNull(values, "values");
    }

    /** The knob is acted on whatever its value. */
    public static KnobUse any(Field<?> field) {
        return new KnobUse(field, value -> true, "any value");
    }

    /** The knob is acted on only at {@code value}; the runtime does not do what another value asks for yet. */
    public static KnobUse only(Field<?> field, Object value) {
        return new KnobUse(field, value::equals, String.valueOf(value));
    }
}
