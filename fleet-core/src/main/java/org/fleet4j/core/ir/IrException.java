package org.fleet4j.core.ir;

/** A program that is not well formed: an unknown op or attribute, a missing var, a shape that does not fit. */
public class IrException extends RuntimeException {
    public IrException(String message) {
        super(message);
    }

    public IrException(String message, Throwable cause) {
        super(message, cause);
    }
}
