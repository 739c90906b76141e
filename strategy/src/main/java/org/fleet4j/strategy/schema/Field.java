package org.fleet4j.strategy.schema;

import java.util.List;

/**
 * One knob of the strategy: its key (dotted for nested ones: {@code amp_configs.init_loss_scaling}),
 * type, default, allowed range, documentation, aliases and whether only GPUs use it. The table of all
 * fields, {@link StrategySchema}, drives parsing, validation, saving, storage and the dry run.
 *
 * @param <T> the Java type of the value: Boolean, Integer, Double, String or an immutable List
 */
public final class Field<T> {
    private final String key;
    private final ValueKind kind;
    private final T defaultValue;
    private final Constraint constraint;
    private final List<String> choices;
    private final String doc;
    private final List<String> aliases;
    private final boolean gpuOnly;

    private Field(String key, ValueKind kind, T defaultValue, Constraint constraint, List<String> choices,
                  String doc, List<String> aliases, boolean gpuOnly) {
        this.key = key;
        this.kind = kind;
        this.defaultValue = defaultValue;
        this.constraint = constraint;
        this.choices = choices;
        this.doc = doc;
        this.aliases = aliases;
        this.gpuOnly = gpuOnly;
    }

    static Field<Boolean> bool(String key, boolean defaultValue, String doc) {
        return new Field<>(key, ValueKind.BOOL, defaultValue, Constraint.none(), List.of(), doc, List.of(), false);
    }

    static Field<Integer> integer(String key, int defaultValue, Constraint constraint, String doc) {
        return new Field<>(key, ValueKind.INT, defaultValue, constraint, List.of(), doc, List.of(), false);
    }

    static Field<Double> decimal(String key, double defaultValue, Constraint constraint, String doc) {
        return new Field<>(key, ValueKind.FLOAT, defaultValue, constraint, List.of(), doc, List.of(), false);
    }

    static Field<String> choice(String key, String defaultValue, List<String> choices, String doc) {
        return new Field<>(key, ValueKind.CHOICE, defaultValue, Constraint.none(), choices, doc, List.of(), false);
    }

    static Field<String> protoEnum(String key, String defaultValue, List<String> choices, String doc) {
        return new Field<>(key, ValueKind.ENUM, defaultValue, Constraint.none(), choices, doc, List.of(), false);
    }

    static Field<List<String>> stringList(String key, String doc) {
        return new Field<>(key, ValueKind.STRING_LIST, List.of(), Constraint.none(), List.of(), doc, List.of(), false);
    }

    static Field<List<Double>> decimalList(String key, Constraint constraint, String doc) {
        return new Field<>(key, ValueKind.FLOAT_LIST, List.of(), constraint, List.of(), doc, List.of(), false);
    }

    /** The same field, marked as used only on GPUs (cuDNN settings). */
    Field<T> gpuOnly() {
        return new Field<>(key, kind, defaultValue, constraint, choices, doc, aliases, true);
    }

    /** The same field, also reachable under these top-level names (the Fleet docs' spellings). */
    Field<T> aliases(String... names) {
        return new Field<>(key, kind, defaultValue, constraint, choices, doc, List.of(names), gpuOnly);
    }

    /** The canonical key, dotted for fields of a group. */
    public String key() {
        return key;
    }

    /** The group this field belongs to ({@code amp_configs}), or null for a top-level field. */
    public String group() {
        int dot = key.indexOf('.');
        return dot < 0 ? null : key.substring(0, dot);
    }

    /** The key inside its group ({@code init_loss_scaling}). */
    public String name() {
        return key.substring(key.indexOf('.') + 1);
    }

    public ValueKind kind() {
        return kind;
    }

    public T defaultValue() {
        return defaultValue;
    }

    public Constraint constraint() {
        return constraint;
    }

    /** Allowed names of a CHOICE or ENUM field; empty for other kinds. */
    public List<String> choices() {
        return choices;
    }

    public String doc() {
        return doc;
    }

    /** Other top-level names for this field; they all store into this one field. */
    public List<String> aliases() {
        return aliases;
    }

    public boolean isGpuOnly() {
        return gpuOnly;
    }

    /** What values are allowed, in words: "integer, at least 1", "one of avg, sum". */
    public String allowed() {
        if (!choices.isEmpty()) {
            return "one of " + String.join(", ", choices);
        }
        String range = constraint.description();
        if (range.isEmpty()) {
            return kind.expected();
        }
        return range.startsWith("a ") ? range : kind.expected() + ", " + range;
    }

    /** The value converted from what a file wrote, range-checked. */
    public Object fromRaw(RawValue raw) throws InvalidValueException {
        return checked(kind.fromRaw(raw, choices));
    }

    /** The value given in Java, normalised and range-checked. */
    public Object fromJava(Object value) throws InvalidValueException {
        return checked(kind.fromJava(value, choices));
    }

    private Object checked(Object value) throws InvalidValueException {
        String violation = constraint.violation(value);
        if (violation != null) {
            throw new InvalidValueException(ValueKind.show(value) + " is out of range: " + violation);
        }
        return value;
    }

    @Override
    public String toString() {
        return key;
    }
}
