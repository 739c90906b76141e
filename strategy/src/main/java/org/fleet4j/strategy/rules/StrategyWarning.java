package org.fleet4j.strategy.rules;

import org.fleet4j.strategy.schema.ValueKind;

/** A setting that will not act as the user may expect: not implemented yet, ignored, or without effect. */
public record StrategyWarning(String key, Object value, Kind kind, String reason) {
    public enum Kind {
        NOT_IN_EFFECT("not in effect yet"),
        IGNORED_ON_CPU("ignored on cpu"),
        NO_EFFECT("no effect"),
        ADVICE("advice");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        /** The short label the dry-run table shows. */
        public String label() {
            return label;
        }
    }

    @Override
    public String toString() {
        return key + " = " + ValueKind.show(value) + ": " + kind.label + ": " + reason;
    }
}
