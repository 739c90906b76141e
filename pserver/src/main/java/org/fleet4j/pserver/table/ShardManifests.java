package org.fleet4j.pserver.table;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.fleet4j.core.io.Checkpoint;
import org.fleet4j.core.io.CheckpointException;
import org.fleet4j.text.Quoted;

/**
 * The manifests {@code pserver-I-of-S.json} of a checkpoint folder, read and checked to be the shards of one save
 * before any shard file is read: every server's is there, each names the same save ({@link SaveIdentity}) and the
 * same tables (names, dimensions or shapes, optimizers and their slots). A folder whose shards come from two saves
 * (another job, another epoch) would load without complaint and train from a model that never existed.
 */
final class ShardManifests {
    static final String FORMAT = "fleet4j-pserver-shard";
    /**
     * 3: incremental saves (kind, parent), row stats, admission filters, the table's step; 2: the manifest names its
     * save; version 1 did not, so its shards cannot be checked against each other.
     */
    static final int VERSION = 3;
    /** The oldest version read: a version-2 manifest is a full save without row stats. */
    static final int OLDEST = 2;
    /** Longer chains are refused: a loop of parents, or a chain nobody meant to keep. */
    static final int LONGEST_CHAIN = 10_000;
    /** The key of the save id in a shard file's safetensors metadata, so that a file swapped alone is found too. */
    static final String SAVE_ID_METADATA = "save_id";
    private static final Pattern NAME = Pattern.compile("pserver-(\\d+)-of-(\\d+)\\.json");
    private static final ObjectMapper JSON = new ObjectMapper();

    private ShardManifests() {
    }

    /** One server's manifest and the shard file it names. */
    record Manifest(Path file, JsonNode json) {
        Path shardFile() {
            return file.resolveSibling(json.path("file").asText());
        }

        String saveId() {
            return json.path("save").path("id").asText();
        }

        /** Whether this is an incremental save, whose rows add to its parent's. */
        boolean isDelta() {
            return ShardCheckpoint.DELTA.equals(json.path("kind").asText());
        }

        /** Checks that {@code shard}, read from {@link #shardFile}, was written by the same save as this manifest. */
        void checkShard(Checkpoint shard) {
            String id = shard.metadata().get(SAVE_ID_METADATA);
            if (!saveId().equals(id)) {
                throw new CheckpointException(shardFile(), null, "belongs to save " + (id == null ? "(none named)"
                        : Quoted.of(id)) + ", but its manifest " + file.getFileName() + " names save " + Quoted.of(saveId())
                        + "; the shard file and its manifest must come from one save");
            }
        }
    }

    /**
     * The chain that ends at {@code tip}: its full save first, then every incremental save after it, each the parent
     * of the next, checked by the save id the child names.
     */
    static List<Manifest> chain(Manifest tip) {
        List<Manifest> chain = new ArrayList<>();
        chain.add(tip);
        Manifest m = tip;
        while (m.isDelta()) {
            if (chain.size() > LONGEST_CHAIN) {
                throw new CheckpointException(tip.file(), null, "names a chain of more than " + LONGEST_CHAIN
                        + " incremental saves; make a full save");
            }
            JsonNode parent = m.json().path("parent");
            Path parentDir = m.file().getParent().resolve(parent.path("dir").asText()).normalize();
            Path parentFile = parentDir.resolve(m.file().getFileName());
            if (!Files.isRegularFile(parentFile)) {
                throw new CheckpointException(m.file(), null, "is an incremental save whose parent " + parentFile
                        + " is missing; restore needs the whole chain back to a full save (keep the folders its"
                        + " manifests name as parents)");
            }
            Manifest up = new Manifest(parentFile, readOne(parentFile));
            if (!up.saveId().equals(parent.path("save_id").asText())) {
                throw new CheckpointException(m.file(), null, "names parent save " + Quoted.of(parent.path("save_id")
                        .asText()) + " in " + parentDir + ", but that folder holds save " + Quoted.of(up.saveId())
                        + " (saved over since); the chain is broken: restore from an earlier full save");
            }
            chain.addFirst(up);
            m = up;
        }
        return chain;
    }

    /** The manifest's record of its save. */
    static ObjectNode describe(SaveIdentity save) {
        ObjectNode node = JSON.createObjectNode().put("job", save.job()).put("id", save.saveId());
        if (save.epoch() == SaveIdentity.UNKNOWN) {
            node.putNull("epoch");
        } else {
            node.put("epoch", save.epoch());
        }
        if (save.step() == SaveIdentity.UNKNOWN) {
            node.putNull("step");
        } else {
            node.put("step", save.step());
        }
        return node;
    }

    /** Every server's manifest in {@code dir}, in server order, checked to be of one save. */
    static List<Manifest> read(Path dir) {
        Map<Integer, TreeMap<Integer, Path>> bySize = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.forEach(f -> {
                Matcher m = NAME.matcher(f.getFileName().toString());
                if (m.matches()) {
                    bySize.computeIfAbsent(Integer.parseInt(m.group(2)), k -> new TreeMap<>())
                            .put(Integer.parseInt(m.group(1)), f);
                }
            });
        } catch (NoSuchFileException e) {
            throw new CheckpointException(dir, null, "directory does not exist", e);
        } catch (IOException e) {
            throw new CheckpointException(dir, null, "cannot be listed: " + e, e);
        }
        if (bySize.isEmpty()) {
            throw new CheckpointException(dir, null, "holds no parameter-server manifest (pserver-I-of-S.json); "
                    + "name the directory a server checkpoint was saved to");
        }
        if (bySize.size() > 1) {
            throw new CheckpointException(dir, null, "holds manifests of saves with " + bySize.keySet()
                    + " servers; keep one save per directory");
        }
        int servers = bySize.keySet().iterator().next();
        TreeMap<Integer, Path> files = bySize.get(servers);
        List<Manifest> manifests = new ArrayList<>();
        for (int i = 0; i < servers; i++) {
            Path file = files.get(i);
            if (file == null) {
                throw new CheckpointException(dir.resolve(ShardCheckpoint.baseName(i, servers) + ".json"), null,
                        "is missing: the checkpoint was saved by " + servers + " servers and each wrote a manifest");
            }
            manifests.add(new Manifest(file, readOne(file)));
        }
        Manifest first = manifests.getFirst();
        for (Manifest other : manifests.subList(1, manifests.size())) {
            List<String> differences = differences(first.json(), other.json());
            if (!differences.isEmpty()) {
                throw new CheckpointException(dir, null, first.file().getFileName() + " and " + other.file().getFileName()
                        + " come from different saves (" + String.join(", ", differences) + "); a folder must hold"
                        + " the shards of one save: load the folder that save wrote, whole");
            }
        }
        return manifests;
    }

    private static JsonNode readOne(Path file) {
        JsonNode m;
        try {
            m = JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw new CheckpointException(file, null, "is not a readable JSON manifest: " + Quoted.message(e.getMessage()), e);
        }
        if (m == null || !FORMAT.equals(m.path("format").asText()) || m.path("file").asText().isEmpty()) {
            throw new CheckpointException(file, null, "is not a " + FORMAT + " manifest (format and file fields)");
        }
        int version = m.path("version").asInt();
        if (version < OLDEST) {
            throw new CheckpointException(file, null, "has manifest version " + version + ", which records no save"
                    + " identity, so its shards cannot be checked to come from one save; this Fleet4J reads versions "
                    + OLDEST + " to " + VERSION + ": save the tables again with it");
        }
        if (version > VERSION || m.path("save").path("id").asText().isEmpty()) {
            throw new CheckpointException(file, null, "has manifest version " + version + (version > VERSION
                    ? ", newer than this Fleet4J reads (" + VERSION + ")" : " but no save id") + "; it cannot be loaded");
        }
        return m;
    }

    /** What tells the saves of two manifests apart, as "save id a vs b"; empty when they are of one save. */
    private static List<String> differences(JsonNode a, JsonNode b) {
        List<String> out = new ArrayList<>();
        JsonNode sa = a.path("save");
        JsonNode sb = b.path("save");
        differ(out, "save id", sa.path("id"), sb.path("id"));
        differ(out, "job", sa.path("job"), sb.path("job"));
        differ(out, "epoch", sa.path("epoch"), sb.path("epoch"));
        differ(out, "step", sa.path("step"), sb.path("step"));
        differ(out, "minimum dense block size", a.path("min_block_size"), b.path("min_block_size"));
        for (String kind : List.of("dense", "sparse")) {
            Map<String, String> ta = schema(a.path(kind));
            Map<String, String> tb = schema(b.path(kind));
            if (!ta.keySet().equals(tb.keySet())) {
                out.add(kind + " tables " + Quoted.bare(ta.keySet().toString()) + " vs " + Quoted.bare(tb.keySet().toString()));
                continue;
            }
            ta.forEach((name, description) -> {
                if (!description.equals(tb.get(name))) {
                    out.add(kind + " table " + Quoted.bare(name) + " " + Quoted.bare(description) + " vs "
                            + Quoted.bare(tb.get(name)));
                }
            });
        }
        return out;
    }

    private static void differ(List<String> out, String what, JsonNode a, JsonNode b) {
        if (!a.equals(b)) {
            out.add(what + " " + shown(a) + " vs " + shown(b));
        }
    }

    private static String shown(JsonNode v) {
        return v.isMissingNode() || v.isNull() ? "none" : Quoted.bare(v.asText());
    }

    /** Each table's name to what a save of it must agree on: its shape or dimension, optimizer, slots and scalars. */
    private static Map<String, String> schema(JsonNode tables) {
        Map<String, String> out = new TreeMap<>();
        for (JsonNode t : tables) {
            String size = t.has("shape") ? "shape " + t.path("shape") : "dim " + t.path("dim").asText();
            out.put(t.path("name").asText(), size + ", " + t.path("optimizer").asText() + " " + t.path("slots")
                    + " " + t.path("scalars"));
        }
        return out;
    }
}
