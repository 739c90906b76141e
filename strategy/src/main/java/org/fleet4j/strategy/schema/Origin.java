package org.fleet4j.strategy.schema;

/**
 * Where a setting came from: Java code, or a file and the line in it (0 when the format has no
 * lines to report). Errors and the dry run use it to point the user at the setting.
 */
public record Origin(String file, int line) {
    private static final Origin CODE = new Origin(null, 0);

    public static Origin code() {
        return CODE;
    }

    public static Origin file(String file, int line) {
        return new Origin(file, line);
    }

    public boolean fromFile() {
        return file != null;
    }

    /** "strategy.yaml:12: " for a file, "" for code: the start of an error line. */
    public String prefix() {
        if (file == null) {
            return "";
        }
        return line > 0 ? file + ":" + line + ": " : file + ": ";
    }

    /** "strategy.yaml:12" or "code": where the setting was made, in a sentence. */
    public String describe() {
        if (file == null) {
            return "code";
        }
        return line > 0 ? file + ":" + line : file;
    }
}
