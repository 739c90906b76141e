package org.fleet4j.pserver.table;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.fleet4j.core.io.AtomicFile;
import org.fleet4j.core.io.Checkpoint;
import org.fleet4j.core.io.CheckpointException;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * A server's shard on disk: {@code pserver-I-of-S.safetensors} with every dense block's value and optimizer slots
 * ({@code dense/PARAM/BLOCK/value}, {@code .../SLOT}) and every sparse table's ids, values and slots
 * ({@code sparse/TABLE/keys}, {@code .../value}, {@code .../SLOT}), then the manifest {@code pserver-I-of-S.json}
 * that describes it and names its save ({@link SaveIdentity}, also in the shard file's metadata); both are written to
 * a temporary file and renamed, the manifest last. Rows and blocks are copied under their own locks, so each saved
 * value and its slots come from the same update while pushes go on.
 *
 * <p>Loading checks that every manifest names one save ({@link ShardManifests}), reads every server's shard and keeps what belongs to this server under the current number of
 * servers: sparse rows by {@link KeyHash#serverOf}, dense blocks cut from the parameters reassembled whole. Every
 * file is read and checked before any table is written.
 */
final class ShardCheckpoint {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;

    private ShardCheckpoint() {
    }

    static String baseName(int server, int servers) {
        return "pserver-" + server + "-of-" + servers;
    }

    static void save(TableShard shard, Path dir, SaveIdentity save) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new CheckpointException(dir, null, "cannot create the checkpoint directory: " + e, e);
        }
        String base = baseName(shard.server(), shard.servers());
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        ObjectNode manifest = JSON.createObjectNode();
        manifest.put("format", ShardManifests.FORMAT).put("version", ShardManifests.VERSION).put("server", shard.server())
                .put("servers", shard.servers()).put("file", base + ".safetensors").put("min_block_size", shard.minBlockSize());
        manifest.set("save", ShardManifests.describe(save));
        ArrayNode denseOut = manifest.putArray("dense");
        for (DenseTableConfig c : shard.denseConfigs()) {
            ObjectNode t = describe(denseOut.addObject().put("name", c.name()), c.optimizer());
            ArrayNode shape = t.putArray("shape");
            Arrays.stream(c.shape()).forEach(shape::add);
            ArrayNode blocks = t.putArray("blocks");
            for (DenseBlock b : shard.denseBlocks()) {
                if (b.spec().param().equals(c.name())) {
                    DenseSlicing.Block s = b.spec();
                    blocks.addObject().put("block", s.block()).put("offset", s.offset()).put("numel", s.numel());
                    splitRecord(tensors, "dense/" + c.name() + "/" + s.block(), c.optimizer(), b.snapshot(), s.numel());
                }
            }
        }
        ArrayNode sparseOut = manifest.putArray("sparse");
        for (SparseTableConfig c : shard.sparseConfigs()) {
            RowCollector rows = new RowCollector(c, shard.sparseTable(c.name()).keys() + 1024);
            shard.sparseTable(c.name()).forEachRow(rows::add);
            rows.into(tensors, "sparse/" + c.name());
            describe(sparseOut.addObject().put("name", c.name()).put("dim", c.dim()), c.optimizer())
                    .put("rows", rows.count);
        }
        SafeTensors.write(dir.resolve(base + ".safetensors"), tensors,
                Map.of("format", ShardManifests.FORMAT, ShardManifests.SAVE_ID_METADATA, save.saveId()));
        try {
            AtomicFile.write(dir.resolve(base + ".json"), JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(manifest));
        } catch (IOException e) {
            throw new CheckpointException(dir.resolve(base + ".json"), null, "cannot be encoded: " + e, e);
        }
    }

    private static ObjectNode describe(ObjectNode t, ServerOptimizer opt) {
        t.put("optimizer", opt.name());
        opt.slots().forEach(t.putArray("slots")::add);
        opt.scalars().forEach(t.putArray("scalars")::add);
        return t;
    }

    /** Splits a dense record into its value, slot and scalar tensors. */
    private static void splitRecord(Map<String, Tensor> out, String prefix, ServerOptimizer opt, float[] rec, long numel) {
        int n = Math.toIntExact(numel);
        out.put(prefix + "/value", Tensor.of(Arrays.copyOfRange(rec, 0, n), n));
        for (int k = 0; k < opt.slots().size(); k++) {
            out.put(prefix + "/" + opt.slots().get(k), Tensor.of(Arrays.copyOfRange(rec, (k + 1) * n, (k + 2) * n), n));
        }
        int base = (opt.slots().size() + 1) * n;
        for (int k = 0; k < opt.scalars().size(); k++) {
            out.put(prefix + "/" + opt.scalars().get(k), Tensor.of(new float[]{rec[base + k]}, 1));
        }
    }

    /** Sparse rows copied into column tensors (ids, value, each slot and scalar), grown by doubling. */
    private static final class RowCollector {
        private final int dim;
        private final int slots;
        private final int scalars;
        private Tensor keys;
        private Tensor[] parts;
        private long count;
        private final SparseTableConfig config;

        RowCollector(SparseTableConfig config, long capacity) {
            this.config = config;
            this.dim = config.dim();
            this.slots = config.optimizer().slots().size();
            this.scalars = config.optimizer().scalars().size();
            allocate(capacity);
        }

        private void allocate(long capacity) {
            Tensor oldKeys = keys;
            Tensor[] oldParts = parts;
            keys = Tensor.zeros(DType.I64, capacity);
            parts = new Tensor[1 + slots + scalars];
            for (int k = 0; k < parts.length; k++) {
                parts[k] = k <= slots ? Tensor.zeros(capacity, dim) : Tensor.zeros(capacity);
                if (oldParts != null) {
                    MemorySegment.copy(oldParts[k].segment(), 0, parts[k].segment(), 0, oldParts[k].byteSize());
                }
            }
            if (oldKeys != null) {
                MemorySegment.copy(oldKeys.segment(), 0, keys.segment(), 0, oldKeys.byteSize());
            }
        }

        void add(long id, MemorySegment record) {
            if (count == keys.numel()) {
                allocate(count * 2);
            }
            keys.setLong(count, id);
            long rowBytes = dim * (long) Float.BYTES;
            for (int k = 0; k <= slots; k++) {
                MemorySegment.copy(record, k * rowBytes, parts[k].segment(), count * rowBytes, rowBytes);
            }
            for (int k = 0; k < scalars; k++) {
                parts[1 + slots + k].setFloat(count, record.getAtIndex(F, (1L + slots) * dim + k));
            }
            count++;
        }

        void into(Map<String, Tensor> out, String prefix) {
            out.put(prefix + "/keys", keys.rows(0, count));
            out.put(prefix + "/value", parts[0].rows(0, count));
            for (int k = 0; k < slots; k++) {
                out.put(prefix + "/" + config.optimizer().slots().get(k), parts[1 + k].rows(0, count));
            }
            for (int k = 0; k < scalars; k++) {
                out.put(prefix + "/" + config.optimizer().scalars().get(k), parts[1 + slots + k].rows(0, count));
            }
        }
    }

    /** One saved shard, read and checked against this server's tables. */
    private record Saved(Path manifestFile, Path file, JsonNode manifest, Map<String, Tensor> tensors) {
    }

    static void load(Path dir, TableShard shard) {
        List<Saved> saved = readAll(dir, shard);
        for (SparseTableConfig c : shard.sparseConfigs()) {
            loadSparse(saved, shard, c);
        }
        for (DenseTableConfig c : shard.denseConfigs()) {
            loadDense(saved, shard, c);
        }
    }

    private static List<Saved> readAll(Path dir, TableShard shard) {
        List<Saved> saved = new ArrayList<>();
        for (ShardManifests.Manifest m : ShardManifests.read(dir)) {
            Checkpoint file = SafeTensors.readCheckpoint(m.shardFile());
            m.checkShard(file);
            saved.add(new Saved(m.file(), m.shardFile(), m.json(), file.tensors()));
        }
        for (Saved s : saved) {
            check(s, shard);
        }
        return saved;
    }

    /** Every table this server has is in the shard, with its optimizer's state and the shapes the manifest says. */
    private static void check(Saved s, TableShard shard) {
        for (SparseTableConfig c : shard.sparseConfigs()) {
            JsonNode t = table(s, "sparse", c.name(), c.optimizer());
            if (t.path("dim").asInt() != c.dim()) {
                throw new CheckpointException(s.manifestFile(), c.name(), c.name() + " was saved with dimension "
                        + t.path("dim").asInt() + ", the server's table has " + c.dim());
            }
            long rows = t.path("rows").asLong();
            String prefix = "sparse/" + c.name() + "/";
            requireShape(s, prefix + "keys", DType.I64, rows);
            requireShape(s, prefix + "value", DType.F32, rows, c.dim());
            for (String slot : c.optimizer().slots()) {
                requireShape(s, prefix + slot, DType.F32, rows, c.dim());
            }
            for (String scalar : c.optimizer().scalars()) {
                requireShape(s, prefix + scalar, DType.F32, rows);
            }
        }
        for (DenseTableConfig c : shard.denseConfigs()) {
            JsonNode t = table(s, "dense", c.name(), c.optimizer());
            long[] shape = JSON.convertValue(t.path("shape"), long[].class);
            if (!Arrays.equals(shape, c.shape())) {
                throw new CheckpointException(s.manifestFile(), c.name(), c.name() + " was saved with shape "
                        + Shapes.str(shape) + ", the server's table has " + Shapes.str(c.shape()));
            }
            for (JsonNode b : t.path("blocks")) {
                String prefix = "dense/" + c.name() + "/" + b.path("block").asInt() + "/";
                long numel = b.path("numel").asLong();
                requireShape(s, prefix + "value", DType.F32, numel);
                for (String slot : c.optimizer().slots()) {
                    requireShape(s, prefix + slot, DType.F32, numel);
                }
                for (String scalar : c.optimizer().scalars()) {
                    requireShape(s, prefix + scalar, DType.F32, 1);
                }
            }
        }
    }

    private static JsonNode table(Saved s, String kind, String name, ServerOptimizer opt) {
        List<String> names = new ArrayList<>();
        for (JsonNode t : s.manifest().path(kind)) {
            names.add(t.path("name").asText());
            if (t.path("name").asText().equals(name)) {
                if (!t.path("optimizer").asText().equals(opt.name())) {
                    throw new CheckpointException(s.manifestFile(), name, name + " was saved with optimizer "
                            + t.path("optimizer").asText() + ", the server runs " + opt.name()
                            + "; its state cannot be carried over");
                }
                return t;
            }
        }
        throw new CheckpointException(s.manifestFile(), name, "has no " + kind + " table " + name + "; it holds " + names);
    }

    private static void requireShape(Saved s, String name, DType dtype, long... shape) {
        Tensor t = s.tensors().get(name);
        if (t == null) {
            throw new CheckpointException(s.file(), name, name + " is missing (the manifest " + s.manifestFile()
                    .getFileName() + " lists it)");
        }
        if (t.dtype() != dtype || !t.hasShape(shape)) {
            throw new CheckpointException(s.file(), name, name + " is " + t.dtype().displayName() + Shapes.str(t.shape())
                    + ", the manifest " + s.manifestFile().getFileName() + " says " + dtype.displayName()
                    + Shapes.str(shape));
        }
    }

    private static void loadSparse(List<Saved> saved, TableShard shard, SparseTableConfig c) {
        SparseTable table = shard.sparseTable(c.name());
        ServerOptimizer opt = c.optimizer();
        int slots = opt.slots().size();
        int recordFloats = Math.toIntExact(opt.recordFloats(c.dim()));
        // rows go to the table's owners in batches, one task per owner each
        int batch = 4096;
        long[] ids = new long[batch];
        float[] records = new float[batch * recordFloats];
        int held = 0;
        for (Saved s : saved) {
            String prefix = "sparse/" + c.name() + "/";
            Tensor keys = s.tensors().get(prefix + "keys");
            Tensor[] columns = new Tensor[1 + slots];
            columns[0] = s.tensors().get(prefix + "value");
            for (int k = 0; k < slots; k++) {
                columns[1 + k] = s.tensors().get(prefix + opt.slots().get(k));
            }
            Tensor[] scalars = opt.scalars().stream().map(n -> s.tensors().get(prefix + n)).toArray(Tensor[]::new);
            for (long r = 0; r < keys.numel(); r++) {
                long id = keys.getLong(r);
                if (KeyHash.serverOf(id, shard.servers()) != shard.server()) {
                    continue;
                }
                int at = held * recordFloats;
                for (int k = 0; k <= slots; k++) {
                    MemorySegment.copy(columns[k].segment(), F, r * c.dim() * Float.BYTES, records, at + k * c.dim(),
                            c.dim());
                }
                for (int k = 0; k < scalars.length; k++) {
                    records[at + (1 + slots) * c.dim() + k] = scalars[k].getFloat(r);
                }
                ids[held++] = id;
                if (held == batch) {
                    table.putRecords(ids, records, held);
                    held = 0;
                }
            }
        }
        table.putRecords(ids, records, held);
    }

    /** Reassembles the parameter and its slots from every saved block, then cuts this server's blocks from it. */
    private static void loadDense(List<Saved> saved, TableShard shard, DenseTableConfig c) {
        ServerOptimizer opt = c.optimizer();
        int slots = opt.slots().size();
        int numel = Math.toIntExact(c.numel());
        float[][] whole = new float[1 + slots][numel];
        TreeMap<Long, float[]> scalarsByOffset = new TreeMap<>();
        long covered = 0;
        for (Saved s : saved) {
            JsonNode t = table(s, "dense", c.name(), opt);
            for (JsonNode b : t.path("blocks")) {
                String prefix = "dense/" + c.name() + "/" + b.path("block").asInt() + "/";
                long offset = b.path("offset").asLong();
                long n = b.path("numel").asLong();
                if (offset < 0 || offset + n > numel) {
                    throw new CheckpointException(s.manifestFile(), c.name(), c.name() + " block at " + offset
                            + " of " + n + " elements lies outside the parameter's " + numel);
                }
                for (int k = 0; k <= slots; k++) {
                    String part = k == 0 ? "value" : opt.slots().get(k - 1);
                    MemorySegment.copy(s.tensors().get(prefix + part).segment(), F, 0, whole[k], (int) offset, (int) n);
                }
                float[] scalars = new float[opt.scalars().size()];
                for (int k = 0; k < scalars.length; k++) {
                    scalars[k] = s.tensors().get(prefix + opt.scalars().get(k)).getFloat(0);
                }
                scalarsByOffset.put(offset, scalars);
                covered += n;
            }
        }
        if (covered != numel) {
            throw new CheckpointException(saved.getFirst().manifestFile(), c.name(), "the saved blocks of " + c.name()
                    + " cover " + covered + " of its " + numel + " elements; a shard is missing or from another save");
        }
        for (DenseBlock b : shard.denseBlocks()) {
            if (!b.spec().param().equals(c.name())) {
                continue;
            }
            int from = (int) b.spec().offset();
            int n = (int) b.spec().numel();
            float[] rec = new float[Math.toIntExact(opt.recordFloats(n))];
            for (int k = 0; k <= slots; k++) {
                System.arraycopy(whole[k], from, rec, k * n, n);
            }
            float[] scalars = scalarsByOffset.floorEntry((long) from).getValue();
            System.arraycopy(scalars, 0, rec, (1 + slots) * n, scalars.length);
            b.restore(rec);
        }
    }
}
