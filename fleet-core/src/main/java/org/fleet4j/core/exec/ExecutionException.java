package org.fleet4j.core.exec;

/** A run that failed: a bad feed or fetch, or an op whose kernel rejected its inputs (named in the message). */
public class ExecutionException extends RuntimeException {
    public ExecutionException(String message) {
        super(message);
    }

    public ExecutionException(String message, Throwable cause) {
        super(message, cause);
    }
}
