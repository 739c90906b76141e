package org.fleet4j.core.data;

import java.nio.file.Path;

/** A data file is missing, truncated or not in the format it claims; the message names the file and what is wrong. */
public class DataFormatException extends RuntimeException {
    public DataFormatException(Path file, String problem) {
        super(file + ": " + problem);
    }

    public DataFormatException(Path file, String problem, Throwable cause) {
        super(file + ": " + problem, cause);
    }
}
