package org.fleet4j.pserver.table;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import org.fleet4j.core.io.Checkpoint;
import org.fleet4j.core.io.CheckpointException;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.tensor.Tensor;

/**
 * The values (no optimizer state) of every table in a checkpoint folder that {@link TableShard#save} wrote, by any
 * number of servers, gathered into one place: each dense parameter whole, each sparse table's rows sorted by id. What
 * an inference model needs from the servers.
 *
 * @param dense each dense parameter's elements, by name
 * @param sparse each sparse table's rows, by name
 */
public record SavedValues(Map<String, float[]> dense, Map<String, Rows> sparse) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * A sparse table's rows.
     *
     * @param ids every row's id, ascending
     * @param values row i's {@code dim} values at {@code i * dim}
     */
    public record Rows(int dim, long[] ids, float[] values) {
    }

    /**
     * Reads every shard of the save in {@code dir}, following incremental saves back to their full saves (later rows
     * replace earlier ones, removals drop them); fails naming the file that is missing, not a shard or of another save.
     */
    public static SavedValues read(Path dir) {
        Map<String, float[]> dense = new LinkedHashMap<>();
        Map<String, Map<Long, float[]>> rows = new LinkedHashMap<>();
        Map<String, Integer> dims = new LinkedHashMap<>();
        for (ShardManifests.Manifest tip : ShardManifests.read(dir)) {
            List<ShardManifests.Manifest> chain = ShardManifests.chain(tip);
            for (ShardManifests.Manifest m : chain) {
                Path manifestFile = m.file();
                JsonNode manifest = m.json();
                Checkpoint shard = SafeTensors.readCheckpoint(m.shardFile());
                m.checkShard(shard);
                Map<String, Tensor> tensors = shard.tensors();
                if (m == tip) {
                    for (JsonNode t : manifest.path("dense")) {
                        String name = t.path("name").asText();
                        long numel = Arrays.stream(JSON.convertValue(t.path("shape"), long[].class)).reduce(1, (a, b) -> a * b);
                        float[] whole = dense.computeIfAbsent(name, k -> new float[Math.toIntExact(numel)]);
                        for (JsonNode b : t.path("blocks")) {
                            float[] block = tensor(tensors, manifestFile, "dense/" + name + "/" + b.path("block").asInt()
                                    + "/value").toFloatArray();
                            System.arraycopy(block, 0, whole, b.path("offset").asInt(), block.length);
                        }
                    }
                }
                for (JsonNode t : manifest.path("sparse")) {
                    String name = t.path("name").asText();
                    int dim = t.path("dim").asInt();
                    dims.put(name, dim);
                    Map<Long, float[]> table = rows.computeIfAbsent(name, k -> new HashMap<>());
                    long[] keys = longs(tensor(tensors, manifestFile, "sparse/" + name + "/keys"));
                    float[] values = tensor(tensors, manifestFile, "sparse/" + name + "/value").toFloatArray();
                    for (int i = 0; i < keys.length; i++) {
                        table.put(keys[i], Arrays.copyOfRange(values, i * dim, (i + 1) * dim));
                    }
                    Tensor removed = tensors.get("sparse/" + name + "/removed");
                    if (removed != null) {
                        for (long id : longs(removed)) {
                            table.remove(id);
                        }
                    }
                }
            }
        }
        Map<String, Rows> sparse = new LinkedHashMap<>();
        dims.forEach((name, dim) -> sparse.put(name, sorted(dim, rows.get(name))));
        return new SavedValues(dense, sparse);
    }

    private static Tensor tensor(Map<String, Tensor> tensors, Path manifest, String name) {
        Tensor t = tensors.get(name);
        if (t == null) {
            throw new CheckpointException(manifest, name, name + " is missing from the shard file that " + manifest.getFileName()
                    + " names");
        }
        return t;
    }

    private static long[] longs(Tensor t) {
        long[] out = new long[Math.toIntExact(t.numel())];
        for (int i = 0; i < out.length; i++) {
            out[i] = t.getLong(i);
        }
        return out;
    }

    /** The servers' rows (each server's ids disjoint from the others') in one table sorted by id. */
    private static Rows sorted(int dim, Map<Long, float[]> rows) {
        long[] ids = rows.keySet().stream().mapToLong(Long::longValue).sorted().toArray();
        float[] out = new float[ids.length * dim];
        for (int i = 0; i < ids.length; i++) {
            System.arraycopy(rows.get(ids[i]), 0, out, i * dim, dim);
        }
        return new Rows(dim, ids, out);
    }
}
