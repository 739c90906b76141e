package org.fleet4j.pserver.transport;

/** A parameter-server call that failed: the message names the server's endpoint and the call. */
public class PsException extends RuntimeException {
    public PsException(String message) {
        super(message);
    }

    public PsException(String message, Throwable cause) {
        super(message, cause);
    }
}
