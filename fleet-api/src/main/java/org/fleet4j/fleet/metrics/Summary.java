package org.fleet4j.fleet.metrics;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The machine-readable result of a run, written as {@code <log_dir>/summary.json} (atomically). A figure the run did
 * not have (NaN, an infinity: the loss of a run that took no step) is JSON {@code null}, not a string a reader must
 * know to parse.
 */
public final class Summary {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private final Map<String, Object> fields = new LinkedHashMap<>();

    public Summary put(String key, Object value) {
        boolean noFigure = value instanceof Double d && !Double.isFinite(d) || value instanceof Float f && !Float.isFinite(f);
        fields.put(key, noFigure ? null : value);
        return this;
    }

    /** The fields in the order put, a figure the run did not have as null. */
    public Map<String, Object> fields() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(fields));
    }

    public void write(Path file) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        JSON.writeValue(tmp.toFile(), fields);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
