package org.fleet4j.strategy.schema;

import java.util.List;
import java.util.stream.Collectors;
import org.fleet4j.text.Quoted;

/** A value as a file wrote it, before the schema gives it a type. */
public sealed interface RawValue {
    /** The value as the user wrote it, for error messages. */
    String shown();

    record Bool(boolean value) implements RawValue {
        public String shown() {
            return Boolean.toString(value);
        }
    }

    /** A number kept as its text, so that range errors quote exactly what the user wrote. */
    record Number(String text, boolean integral) implements RawValue {
        public String shown() {
            return Quoted.bare(text);
        }
    }

    /** A string; {@code quoted} is false for prototxt identifiers (enum names, true/false). */
    record Text(String value, boolean quoted) implements RawValue {
        public String shown() {
            return quoted ? Quoted.of(value, '"') : Quoted.bare(value);
        }
    }

    record ListOf(List<RawValue> items) implements RawValue {
        public String shown() {
            return Quoted.bare(items.stream().map(RawValue::shown).collect(Collectors.joining(", ", "[", "]")));
        }
    }

    /** A mapping (YAML/JSON) or block (prototxt); its entries arrive separately. */
    record Block() implements RawValue {
        public String shown() {
            return "a block of settings";
        }
    }

    /** A key with no value (YAML "key:" on its own). */
    record Nothing() implements RawValue {
        public String shown() {
            return "no value";
        }
    }
}
