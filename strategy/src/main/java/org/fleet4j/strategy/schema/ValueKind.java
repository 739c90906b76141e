package org.fleet4j.strategy.schema;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.fleet4j.text.Quoted;

/** The type of a strategy field: how values are read from files and Java, and how they are shown. */
public enum ValueKind {
    BOOL("true or false"),
    INT("an integer"),
    FLOAT("a number"),
    /** A string from a fixed set (written quoted in prototxt, like Paddle's string fields). */
    CHOICE("one of the allowed names"),
    /** A protobuf enum: case-insensitive in files, written as a bare upper-case name in prototxt. */
    ENUM("one of the allowed names"),
    STRING_LIST("a list of strings"),
    FLOAT_LIST("a list of numbers");

    private final String expected;

    ValueKind(String expected) {
        this.expected = expected;
    }

    /** What a value of this kind looks like, for docs and errors. */
    public String expected() {
        return expected;
    }

    public boolean isList() {
        return this == STRING_LIST || this == FLOAT_LIST;
    }

    Object fromRaw(RawValue raw, List<String> choices) throws InvalidValueException {
        return switch (this) {
            case BOOL -> switch (raw) {
                case RawValue.Bool b -> b.value();
                case RawValue.Text t when !t.quoted() && (t.value().equals("true") || t.value().equals("True")) -> true;
                case RawValue.Text t when !t.quoted() && (t.value().equals("false") || t.value().equals("False")) -> false;
                default -> throw expectedGot(raw);
            };
            case INT -> integer(raw);
            case FLOAT -> decimal(raw);
            case CHOICE, ENUM -> {
                if (!(raw instanceof RawValue.Text t)) {
                    throw new InvalidValueException("expected one of " + String.join(", ", choices) + ", got " + raw.shown());
                }
                yield choice(t.value(), choices);
            }
            case STRING_LIST -> {
                List<String> out = new ArrayList<>();
                for (RawValue item : items(raw)) {
                    if (!(item instanceof RawValue.Text t)) {
                        throw new InvalidValueException("expected a list of strings, but " + item.shown() + " is not a string");
                    }
                    out.add(t.value());
                }
                yield List.copyOf(out);
            }
            case FLOAT_LIST -> {
                List<Double> out = new ArrayList<>();
                for (RawValue item : items(raw)) {
                    out.add(decimal(item));
                }
                yield List.copyOf(out);
            }
        };
    }

    /** Checks and normalises a value given in Java (e.g. an Integer for a FLOAT field becomes a Double). */
    Object fromJava(Object value, List<String> choices) throws InvalidValueException {
        if (value == null) {
            throw new InvalidValueException("expected " + expected + ", got null");
        }
        return switch (this) {
            case BOOL -> {
                if (value instanceof Boolean b) {
                    yield b;
                }
                throw javaType(value);
            }
            case INT -> {
                if (value instanceof Integer || value instanceof Short || value instanceof Byte
                        || value instanceof Long l && l == l.intValue()) {
                    yield ((java.lang.Number) value).intValue();
                }
                throw javaType(value);
            }
            case FLOAT -> {
                if (value instanceof java.lang.Number n && Double.isFinite(n.doubleValue())) {
                    yield n.doubleValue();
                }
                throw javaType(value);
            }
            case CHOICE, ENUM -> {
                if (value instanceof String s) {
                    yield choice(s, choices);
                }
                if (value instanceof Spelled spelled) {
                    yield choice(spelled.spelling(), choices);
                }
                throw javaType(value);
            }
            case STRING_LIST, FLOAT_LIST -> {
                if (!(value instanceof List<?> list)) {
                    throw javaType(value);
                }
                List<Object> out = new ArrayList<>();
                for (Object item : list) {
                    boolean fits = this == STRING_LIST ? item instanceof String : item instanceof java.lang.Number;
                    if (!fits) {
                        throw new InvalidValueException("expected " + expected + ", but " + Quoted.bare(String.valueOf(item)) + " is not one");
                    }
                    out.add(this == STRING_LIST ? item : ((java.lang.Number) item).doubleValue());
                }
                yield List.copyOf(out);
            }
        };
    }

    /** The value as the table and error messages show it. */
    public static String show(Object value) {
        if (value instanceof List<?> list) {
            return list.stream().map(ValueKind::show).collect(Collectors.joining(", ", "[", "]"));
        }
        if (value instanceof Double d && Double.isFinite(d)) {
            String plain = new BigDecimal(Double.toString(d)).stripTrailingZeros().toPlainString();
            return plain.contains(".") ? plain : plain + ".0";
        }
        return String.valueOf(value);
    }

    private Object choice(String given, List<String> choices) throws InvalidValueException {
        for (String choice : choices) {
            if (this == ENUM ? choice.equalsIgnoreCase(given) : choice.equals(given)) {
                return choice;
            }
        }
        String hint = KeySuggester.nearest(given, choices).map(c -> " (did you mean " + c + "?)").orElse("");
        throw new InvalidValueException(Quoted.of(given) + " is not allowed; allowed: " + String.join(", ", choices) + hint);
    }

    private static int integer(RawValue raw) throws InvalidValueException {
        if (raw instanceof RawValue.Number n) {
            if (!n.integral()) {
                throw new InvalidValueException("expected an integer, got " + Quoted.bare(n.text()));
            }
            try {
                long v = Long.parseLong(n.text().startsWith("+") ? n.text().substring(1) : n.text());
                if (v == (int) v) {
                    return (int) v;
                }
            } catch (NumberFormatException tooLong) {
                // falls through to the range error below
            }
            throw new InvalidValueException(Quoted.bare(n.text()) + " is too large for an integer (at most " + Integer.MAX_VALUE + ")");
        }
        throw new InvalidValueException("expected an integer, got " + raw.shown());
    }

    private static double decimal(RawValue raw) throws InvalidValueException {
        if (raw instanceof RawValue.Number n) {
            String text = n.text().endsWith("f") || n.text().endsWith("F") ? n.text().substring(0, n.text().length() - 1) : n.text();
            try {
                double value = Double.parseDouble(text);
                if (Double.isFinite(value)) {
                    return value;
                }
            } catch (NumberFormatException e) {
                // falls through to the error below
            }
            throw new InvalidValueException("expected a finite number, got " + Quoted.bare(n.text()));
        }
        throw new InvalidValueException("expected a number, got " + raw.shown());
    }

    private static List<RawValue> items(RawValue raw) throws InvalidValueException {
        if (raw instanceof RawValue.ListOf list) {
            return list.items();
        }
        throw new InvalidValueException("expected a list, got " + raw.shown());
    }

    private InvalidValueException expectedGot(RawValue raw) {
        return new InvalidValueException("expected " + expected + ", got " + raw.shown());
    }

    private InvalidValueException javaType(Object value) {
        return new InvalidValueException("expected " + expected + ", got " + Quoted.bare(String.valueOf(value)) + " (" + value.getClass().getSimpleName() + ")");
    }
}
