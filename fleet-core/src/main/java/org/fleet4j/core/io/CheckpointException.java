package org.fleet4j.core.io;

import java.nio.file.Path;

/**
 * A checkpoint cannot be written, read or loaded; the message names the file, the variable when there is one, and
 * what is wrong.
 */
public class CheckpointException extends RuntimeException {
    private final transient Path file;
    private final String variable;

    /** {@code problem} is a sentence that starts with the variable's name when there is one. */
    public CheckpointException(Path file, String variable, String problem) {
        this(file, variable, problem, null);
    }

    public CheckpointException(Path file, String variable, String problem, Throwable cause) {
        super("checkpoint " + file + ": " + problem, cause);
        this.file = file;
        this.variable = variable;
    }

    public Path file() {
        return file;
    }

    /** The variable the problem is about, or null when it is about the file as a whole. */
    public String variable() {
        return variable;
    }
}
