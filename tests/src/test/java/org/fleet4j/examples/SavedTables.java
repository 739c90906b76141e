package org.fleet4j.examples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.tensor.Tensor;

/**
 * The tables of a parameter-server checkpoint folder in a form that does not depend on how many servers saved it:
 * every dense parameter's value, slots and (per element) scalars whole, and every sparse row's value, slots and
 * scalars by table and id. Two folders hold identical tables exactly when their {@code SavedTables} are equal.
 */
final class SavedTables {
    private static final ObjectMapper JSON = new ObjectMapper();

    private SavedTables() {
    }

    /** "dense/PARAM/PART" and "sparse/TABLE/ID" to their floats, sorted by name. */
    static Map<String, List<Float>> read(Path dir) throws IOException {
        Map<String, List<Float>> out = new TreeMap<>();
        List<Path> manifests;
        try (Stream<Path> files = Files.list(dir)) {
            manifests = files.filter(f -> f.getFileName().toString().matches("pserver-\\d+-of-\\d+\\.json")).sorted().toList();
        }
        if (manifests.isEmpty()) {
            throw new AssertionError(dir + " holds no parameter-server manifest");
        }
        for (Path manifestFile : manifests) {
            JsonNode manifest = JSON.readTree(manifestFile.toFile());
            Map<String, Tensor> tensors = SafeTensors.read(dir.resolve(manifest.get("file").asText()));
            for (JsonNode t : manifest.get("dense")) {
                String name = t.get("name").asText();
                for (JsonNode b : t.get("blocks")) {
                    String prefix = "dense/" + name + "/" + b.get("block").asInt() + "/";
                    int offset = b.get("offset").asInt();
                    int n = b.get("numel").asInt();
                    for (String part : parts(t)) {
                        List<Float> whole = out.computeIfAbsent("dense/" + name + "/" + part, k -> unfilled(numelOf(t)));
                        Tensor saved = tensors.get(prefix + part);
                        for (int e = 0; e < n; e++) {
                            whole.set(offset + e, saved.getFloat(saved.numel() == 1 ? 0 : e));
                        }
                    }
                }
            }
            for (JsonNode t : manifest.get("sparse")) {
                String prefix = "sparse/" + t.get("name").asText() + "/";
                Tensor keys = tensors.get(prefix + "keys");
                for (long r = 0; r < keys.numel(); r++) {
                    List<Float> row = new ArrayList<>();
                    for (String part : parts(t)) {
                        Tensor column = tensors.get(prefix + part);
                        long width = column.numel() / keys.numel();
                        for (long c = 0; c < width; c++) {
                            row.add(column.getFloat(r * width + c));
                        }
                    }
                    if (out.put(prefix + keys.getLong(r), row) != null) {
                        throw new AssertionError(dir + ": id " + keys.getLong(r) + " of " + prefix + " is saved twice");
                    }
                }
            }
        }
        return out;
    }

    private static List<String> parts(JsonNode table) {
        List<String> parts = new ArrayList<>(List.of("value"));
        table.get("slots").forEach(s -> parts.add(s.asText()));
        table.get("scalars").forEach(s -> parts.add(s.asText()));
        return parts;
    }

    private static int numelOf(JsonNode dense) {
        int numel = 1;
        for (JsonNode d : dense.get("shape")) {
            numel *= d.asInt();
        }
        return numel;
    }

    /** NaN where no saved block wrote: a gap shows as a difference. */
    private static List<Float> unfilled(int n) {
        return new ArrayList<>(Collections.nCopies(n, Float.NaN));
    }
}
