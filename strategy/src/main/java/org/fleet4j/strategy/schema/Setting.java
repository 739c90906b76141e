package org.fleet4j.strategy.schema;

/** A value the user set, and where it was set. */
public record Setting(Object value, Origin origin) {
}
