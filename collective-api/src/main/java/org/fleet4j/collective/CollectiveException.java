package org.fleet4j.collective;

/** A collective failed: a peer died, stalled, sent a mismatched call or a bad connection. The message names whom. */
public class CollectiveException extends RuntimeException {
    public CollectiveException(String message) {
        super(message);
    }

    public CollectiveException(String message, Throwable cause) {
        super(message, cause);
    }
}
