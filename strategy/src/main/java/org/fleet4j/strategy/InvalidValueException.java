package org.fleet4j.strategy;

/** A value that does not fit its field; the caller adds where it was written and the key. */
final class InvalidValueException extends Exception {
    InvalidValueException(String message) {
        super(message, null, false, false);
    }
}
