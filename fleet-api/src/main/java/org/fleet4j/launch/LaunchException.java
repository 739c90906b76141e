package org.fleet4j.launch;

/** Bad input to the launcher (a flag, a file, a program name): reported as one line, exit code 2. */
public final class LaunchException extends RuntimeException {
    public LaunchException(String message) {
        super(message);
    }

    public LaunchException(String message, Throwable cause) {
        super(message, cause);
    }
}
