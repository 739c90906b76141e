package org.fleet4j.core.io;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.text.Quoted;

/**
 * A text file renaming another framework's tensors to the model's: one {@code theirs=ours} pair per line, blank lines
 * and lines starting with {@code #} ignored, spaces around the names trimmed.
 * <pre>
 * # PyTorch nn.Sequential -> Fleet4J layers
 * 0.weight = fc_0.w_0
 * 0.bias   = fc_0.b_0
 * </pre>
 */
public final class NameMapFile {
    private NameMapFile() {
    }

    /** The pairs of {@code file}; a malformed or repeated line fails naming the file and the line. */
    public static Map<String, String> read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("name map " + file + " does not exist", e);
        } catch (IOException e) {
            throw new IllegalArgumentException("name map " + file + " cannot be read: " + e, e);
        }
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String where = "name map " + file + " line " + (i + 1) + " " + Quoted.of(line);
            int eq = line.indexOf('=');
            if (eq < 0 || line.indexOf('=', eq + 1) >= 0) {
                throw new IllegalArgumentException(where + ": expected one theirs=ours pair");
            }
            String theirs = line.substring(0, eq).strip();
            String ours = line.substring(eq + 1).strip();
            if (theirs.isEmpty() || ours.isEmpty()) {
                throw new IllegalArgumentException(where + ": a name is empty; write theirs=ours");
            }
            if (map.putIfAbsent(theirs, ours) != null) {
                throw new IllegalArgumentException(where + ": " + theirs + " is already mapped to " + map.get(theirs));
            }
        }
        return map;
    }
}
