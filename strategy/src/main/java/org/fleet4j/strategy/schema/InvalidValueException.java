package org.fleet4j.strategy.schema;

/** A value that does not fit its field; the caller adds where it was written and the key. */
public final class InvalidValueException extends Exception {
    InvalidValueException(String message) {
        super(message, null, false, false);
    }
}
