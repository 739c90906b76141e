package org.fleet4j.strategy.rules;

import org.fleet4j.strategy.schema.ValueKind;

/** A value that the world's rules changed from what the strategy asked for, and why. */
public record Change(String key, Object from, Object to, String reason) {
    @Override
    public String toString() {
        return key + ": " + ValueKind.show(from) + " -> " + ValueKind.show(to) + " (" + reason + ")";
    }
}
