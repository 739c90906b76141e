package org.fleet4j.examples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import org.fleet4j.core.io.AtomicFile;
import org.fleet4j.text.Quoted;

/**
 * Where a parameter-server run of {@code ctr} is in a checkpoint folder: {@code progress.json} names the epochs
 * finished, the steps taken and the sub-folder ({@code epoch-E}) the servers saved their tables to after epoch E.
 * The servers save first and the progress is written last (atomically), so a job killed at any moment leaves a
 * progress file that names a complete save.
 *
 * @param epochs epochs finished
 * @param steps training steps taken (every rank the same)
 * @param tables the folder of the servers' shards (absolute)
 */
record CtrProgress(int epochs, long steps, Path tables) {
    static final String FILE = "progress.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The sub-folder of {@code dir} the servers save to after {@code epoch} epochs. */
    static Path tablesAfter(Path dir, int epoch) {
        return dir.toAbsolutePath().resolve("epoch-" + epoch);
    }

    /**
     * The progress recorded in {@code dir}; a folder without {@code progress.json} is a plain
     * {@code fleet.savePersistables} folder: its tables, no epoch finished.
     */
    static CtrProgress read(Path dir) {
        Path file = dir.resolve(FILE);
        if (!Files.isRegularFile(file)) {
            if (!Files.isDirectory(dir)) {
                throw new IllegalArgumentException("--load_checkpoint " + dir + ": no such folder; name the folder that"
                        + " --save_checkpoint wrote in parameter-server mode");
            }
            return new CtrProgress(0, 0, dir.toAbsolutePath());
        }
        try {
            JsonNode p = JSON.readTree(file.toFile());
            if (p == null || !p.path("epochs").canConvertToInt() || !p.path("steps").canConvertToLong()
                    || p.path("tables").asText().isEmpty()) {
                throw new IllegalArgumentException("--load_checkpoint " + dir + ": " + file
                        + " lacks epochs, steps or tables; it was not written by ctr --save_checkpoint");
            }
            return new CtrProgress(p.get("epochs").asInt(), p.get("steps").asLong(), dir.toAbsolutePath()
                    .resolve(p.get("tables").asText()));
        } catch (IOException e) {
            throw new IllegalArgumentException("--load_checkpoint " + dir + ": " + file + " is not readable JSON ("
                    + Quoted.message(e.getMessage()) + ")", e);
        }
    }

    /** Records this progress in {@code dir} (atomically), then removes the tables of the save it replaces. */
    void write(Path dir, CtrProgress replaced) {
        String json = JSON.createObjectNode().put("epochs", epochs).put("steps", steps)
                .put("tables", dir.toAbsolutePath().relativize(tables).toString()).toPrettyString();
        AtomicFile.write(dir.resolve(FILE), json.getBytes(StandardCharsets.UTF_8));
        if (replaced != null && !replaced.tables.equals(tables) && replaced.tables.startsWith(dir.toAbsolutePath())
                && Files.isDirectory(replaced.tables)) {
            deleteTree(replaced.tables);
        }
    }

    private static void deleteTree(Path dir) {
        try (var files = Files.walk(dir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the replaced checkpoint " + dir + ": " + e.getMessage(), e);
        }
    }
}
