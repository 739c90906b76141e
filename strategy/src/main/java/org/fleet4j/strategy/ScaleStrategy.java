package org.fleet4j.strategy;

import org.fleet4j.strategy.schema.Spelled;
import org.fleet4j.text.Quoted;

/** How gradients of all workers are combined (gradient_scale_configs.scale_strategy). */
public enum ScaleStrategy implements Spelled {
    AVG("avg"),
    SUM("sum");

    private final String spelling;

    ScaleStrategy(String spelling) {
        this.spelling = spelling;
    }

    @Override
    public String spelling() {
        return spelling;
    }

    /** The constant whose file spelling is given (the schema has already checked it). */
    public static ScaleStrategy of(String spelling) {
        for (ScaleStrategy value : values()) {
            if (value.spelling.equals(spelling)) {
                return value;
            }
        }
        throw new IllegalArgumentException("no ScaleStrategy is spelt " + Quoted.of(spelling));
    }
}
