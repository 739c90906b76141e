package org.fleet4j.strategy.schema;

import java.util.List;
import java.util.function.Predicate;

/**
 * A range rule on a field's value. {@code description} says what is allowed ("at least 1") and is
 * what both the error messages and docs/STRATEGY.md show.
 */
public record Constraint(String description, Predicate<Object> test) {
    private static final Constraint NONE = new Constraint("", value -> true);

    public static Constraint none() {
        return NONE;
    }

    public static Constraint atLeast(long min) {
        return new Constraint("at least " + min, value -> ((Number) value).longValue() >= min);
    }

    public static Constraint atLeast(double min) {
        return new Constraint("at least " + min, value -> ((Number) value).doubleValue() >= min);
    }

    public static Constraint greaterThan(double min) {
        return new Constraint("greater than " + min, value -> ((Number) value).doubleValue() > min);
    }

    public static Constraint openInterval(double low, double high) {
        return new Constraint("between " + low + " and " + high + ", both excluded", value -> {
            double v = ((Number) value).doubleValue();
            return v > low && v < high;
        });
    }

    /** A fraction that may be 1 but not 0: (0, 1]. */
    public static Constraint aboveZeroAtMostOne() {
        return new Constraint("greater than 0.0 and at most 1.0", value -> {
            double v = ((Number) value).doubleValue();
            return v > 0 && v <= 1;
        });
    }

    /** For counts stored in a float field (as Paddle's proto does): a whole number, at least min. */
    public static Constraint wholeNumberAtLeast(long min) {
        return new Constraint("a whole number, at least " + min, value -> {
            double v = ((Number) value).doubleValue();
            return v >= min && v == Math.rint(v);
        });
    }

    /** For a list of fractions: each in [0, 1). */
    public static Constraint eachInHalfOpenUnit() {
        return new Constraint("a list whose entries are all at least 0 and below 1", value -> {
            for (Object item : (List<?>) value) {
                double v = ((Number) item).doubleValue();
                if (!(v >= 0 && v < 1)) {
                    return false;
                }
            }
            return true;
        });
    }

    /** Null when the value is allowed, otherwise "must be at least 1". */
    public String violation(Object value) {
        return test.test(value) ? null : "must be " + description;
    }
}
