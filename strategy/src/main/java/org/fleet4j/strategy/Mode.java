package org.fleet4j.strategy;

import org.fleet4j.strategy.schema.Spelled;
import org.fleet4j.text.Quoted;

/** How workers combine updates (the mode field). */
public enum Mode implements Spelled {
    COLLECTIVE("collective"),
    PS("ps");

    private final String spelling;

    Mode(String spelling) {
        this.spelling = spelling;
    }

    @Override
    public String spelling() {
        return spelling;
    }

    /** The constant whose file spelling is given (the schema has already checked it). */
    public static Mode of(String spelling) {
        for (Mode value : values()) {
            if (value.spelling.equals(spelling)) {
                return value;
            }
        }
        throw new IllegalArgumentException("no Mode is spelt " + Quoted.of(spelling));
    }
}
