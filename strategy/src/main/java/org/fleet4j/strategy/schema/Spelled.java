package org.fleet4j.strategy.schema;

/** A Java enum for a choice field; {@link #spelling()} is the name strategy files use. */
public interface Spelled {
    String spelling();
}
