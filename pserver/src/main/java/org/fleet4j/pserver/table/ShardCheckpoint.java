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
 * ({@code dense/PARAM/BLOCK/value}, {@code .../SLOT}) and every sparse table's ids, values, slots and row stats
 * ({@code sparse/TABLE/keys}, {@code .../value}, {@code .../SLOT}, {@code .../show}, ...), its admission filter's
 * state and, for an incremental save, the ids evicted since the last save ({@code .../removed}); then the manifest
 * {@code pserver-I-of-S.json} that describes it and names its save ({@link SaveIdentity}, also in the shard file's
 * metadata); both are written to a temporary file and renamed, the manifest last.
 *
 * <p>A full save writes every row; an incremental one ({@link SaveIdentity#incremental}) only the rows changed since
 * this server's last save, whose folder and id its manifest names as its parent ({@code "kind": "delta"}): a chain
 * ends at a full save. Rows are copied on their owners, a chunk at a time ({@link SparseTable#beginSave}), so each
 * saved value, its slots and stats come from the same update while pushes go on. A table that evicts shrinks first.
 *
 * <p>Loading checks that every manifest names one save ({@link ShardManifests}), follows each server's chain back to
 * its full save, reads and checks every file before any table is written, and keeps what belongs to this server
 * under the current number of servers: sparse rows by {@link KeyHash#serverOf} (the full save's, then each delta's in
 * order, with its removals), dense blocks cut from the parameters reassembled whole from the chains' tips.
 */
final class ShardCheckpoint {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED;
    static final String FULL = "full";
    static final String DELTA = "delta";

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
        Path here = dir.toAbsolutePath().normalize();
        TableShard.LastSave parent = shard.lastSave();
        // a delta needs this server's last save, elsewhere (a delta over its own parent would destroy the chain)
        boolean delta = save.incremental() && parent != null && !parent.dir().equals(here)
                && Files.isRegularFile(parent.dir().resolve(baseName(shard.server(), shard.servers()) + ".json"));
        String base = baseName(shard.server(), shard.servers());
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        ObjectNode manifest = JSON.createObjectNode();
        manifest.put("format", ShardManifests.FORMAT).put("version", ShardManifests.VERSION).put("server", shard.server())
                .put("servers", shard.servers()).put("file", base + ".safetensors").put("min_block_size", shard.minBlockSize());
        manifest.set("save", ShardManifests.describe(save));
        manifest.put("kind", delta ? DELTA : FULL);
        if (delta) {
            manifest.putObject("parent").put("dir", here.relativize(parent.dir()).toString())
                    .put("save_id", parent.saveId());
        }
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
        List<SparseTable> begun = new ArrayList<>();
        boolean written = false;
        try {
            for (SparseTableConfig c : shard.sparseConfigs()) {
                SparseTable table = shard.sparseTable(c.name());
                table.shrink("before a save");
                RowCollector rows = new RowCollector(c, table.rowStats(), delta ? 1024 : table.keys() + 1024);
                begun.add(table);
                SparseTable.SaveExtras extras = table.beginSave(delta, rows);
                String prefix = "sparse/" + c.name();
                rows.into(tensors, prefix);
                ObjectNode t = describe(sparseOut.addObject().put("name", c.name()).put("dim", c.dim()), c.optimizer())
                        .put("rows", rows.count).put("step", table.step());
                if (table.rowStats().kept()) {
                    ArrayNode names = t.putArray("row_stats");
                    List.of(RowStats.SHOW, RowStats.CLICK, RowStats.UNSEEN, RowStats.LAST_STEP).forEach(names::add);
                }
                if (delta) {
                    t.put("removed", extras.removed().length);
                    tensors.put(prefix + "/removed", longs(extras.removed()));
                }
                describeFilter(t, c, extras, tensors, prefix, shard);
            }
            SafeTensors.write(dir.resolve(base + ".safetensors"), tensors,
                    Map.of("format", ShardManifests.FORMAT, ShardManifests.SAVE_ID_METADATA, save.saveId()));
            try {
                AtomicFile.write(dir.resolve(base + ".json"), JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(manifest));
            } catch (IOException e) {
                throw new CheckpointException(dir.resolve(base + ".json"), null, "cannot be encoded: " + e, e);
            }
            written = true;
        } finally {
            for (SparseTable t : begun) {
                t.endSave(written);
            }
        }
        shard.lastSave(new TableShard.LastSave(here, save.saveId()));
    }

    /** The admission filter's state: a counter filter's counts, a counting Bloom filter's counters and layout. */
    private static void describeFilter(ObjectNode t, SparseTableConfig c, SparseTable.SaveExtras extras,
                                       Map<String, Tensor> tensors, String prefix, TableShard shard) {
        switch (c.admission()) {
            case RowAdmission.Counter counter -> {
                t.putObject("filter").put("kind", "counter").put("filter_freq", counter.filterFreq())
                        .put("pending", extras.pendingIds().length);
                tensors.put(prefix + "/filter_ids", longs(extras.pendingIds()));
                tensors.put(prefix + "/filter_counts", longs(Arrays.stream(extras.pendingCounts()).asLongStream().toArray()));
            }
            case RowAdmission.CountingBloom bloom -> {
                long slice = extras.bloomSlices().getFirst().byteSize();
                t.putObject("filter").put("kind", "cbf").put("filter_freq", bloom.filterFreq()).put("hashes", bloom.hashes())
                        .put("stripes", extras.bloomSlices().size()).put("slice", slice).put("server", shard.server())
                        .put("servers", shard.servers());
                Tensor counters = Tensor.zeros(DType.I64, extras.bloomSlices().size(), Math.ceilDiv(slice, Long.BYTES));
                for (int i = 0; i < extras.bloomSlices().size(); i++) {
                    MemorySegment.copy(extras.bloomSlices().get(i), 0, counters.segment(),
                            i * Math.ceilDiv(slice, Long.BYTES) * Long.BYTES, slice);
                }
                tensors.put(prefix + "/filter_counters", counters);
            }
            case RowAdmission.Probability p -> t.putObject("filter").put("kind", "probability");
            case RowAdmission.Everyone e -> {
            }
        }
    }

    private static Tensor longs(long[] values) {
        Tensor t = Tensor.zeros(DType.I64, values.length);
        for (int i = 0; i < values.length; i++) {
            t.setLong(i, values[i]);
        }
        return t;
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

    /** Sparse rows copied into column tensors (ids, value, each slot and scalar, each row stat), grown by doubling. */
    private static final class RowCollector implements SparseTable.RowSink {
        private final int dim;
        private final int slots;
        private final int scalars;
        private final boolean stats;
        private Tensor keys;
        /** value, slots, scalars, then show, click (float32) and unseen days, last step (int64). */
        private Tensor[] parts;
        private long count;
        private final SparseTableConfig config;

        RowCollector(SparseTableConfig config, RowStats rowStats, long capacity) {
            this.config = config;
            this.dim = config.dim();
            this.slots = config.optimizer().slots().size();
            this.scalars = config.optimizer().scalars().size();
            this.stats = rowStats.kept();
            allocate(capacity);
        }

        private void allocate(long capacity) {
            Tensor oldKeys = keys;
            Tensor[] oldParts = parts;
            keys = Tensor.zeros(DType.I64, capacity);
            parts = new Tensor[1 + slots + scalars + (stats ? 4 : 0)];
            for (int k = 0; k < parts.length; k++) {
                int stat = k - (1 + slots + scalars);
                parts[k] = k <= slots ? Tensor.zeros(capacity, dim)
                        : stat >= 2 ? Tensor.zeros(DType.I64, capacity) : Tensor.zeros(capacity);
                if (oldParts != null) {
                    MemorySegment.copy(oldParts[k].segment(), 0, parts[k].segment(), 0, oldParts[k].byteSize());
                }
            }
            if (oldKeys != null) {
                MemorySegment.copy(oldKeys.segment(), 0, keys.segment(), 0, oldKeys.byteSize());
            }
        }

        @Override
        public void add(long id, MemorySegment record) {
            if (count == keys.numel()) {
                allocate(count * 2);
            }
            keys.setLong(count, id);
            long rowBytes = dim * (long) Float.BYTES;
            for (int k = 0; k <= slots; k++) {
                MemorySegment.copy(record, k * rowBytes, parts[k].segment(), count * rowBytes, rowBytes);
            }
            long at = (1L + slots) * dim;
            for (int k = 0; k < scalars; k++) {
                parts[1 + slots + k].setFloat(count, record.getAtIndex(F, at + k));
            }
            if (stats) {
                int first = 1 + slots + scalars;
                long statsAt = (at + scalars) * Float.BYTES;
                parts[first].setFloat(count, record.get(F, statsAt));
                parts[first + 1].setFloat(count, record.get(F, statsAt + 4));
                parts[first + 2].setLong(count, record.get(I, statsAt + 8));
                parts[first + 3].setLong(count, record.get(I, statsAt + 12));
            }
            count++;
        }

        @Override
        public long count() {
            return count;
        }

        @Override
        public void truncate(long to) {
            count = to;
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
            if (stats) {
                int first = 1 + slots + scalars;
                out.put(prefix + "/" + RowStats.SHOW, parts[first].rows(0, count));
                out.put(prefix + "/" + RowStats.CLICK, parts[first + 1].rows(0, count));
                out.put(prefix + "/" + RowStats.UNSEEN, parts[first + 2].rows(0, count));
                out.put(prefix + "/" + RowStats.LAST_STEP, parts[first + 3].rows(0, count));
            }
        }
    }

    /** One saved shard, read and checked against this server's tables. */
    private record Saved(Path manifestFile, Path file, JsonNode manifest, Map<String, Tensor> tensors) {
    }

    static void load(Path dir, TableShard shard) {
        List<List<Saved>> chains = readAll(dir, shard);
        List<Saved> tips = chains.stream().map(List::getLast).toList();
        for (SparseTableConfig c : shard.sparseConfigs()) {
            loadSparse(chains, shard, c);
        }
        for (DenseTableConfig c : shard.denseConfigs()) {
            loadDense(tips, shard, c);
        }
        for (SparseTableConfig c : shard.sparseConfigs()) {
            shard.sparseTable(c.name()).markClean();
        }
        // a later incremental save chains to this folder, which holds a shard of this server only in the same layout
        shard.lastSave(chains.size() == shard.servers()
                ? new TableShard.LastSave(dir.toAbsolutePath().normalize(), tips.get(shard.server()).manifest()
                .path("save").path("id").asText())
                : null);
    }

    /** Every server's chain, from its full save to the tip in {@code dir}, each file read and checked. */
    private static List<List<Saved>> readAll(Path dir, TableShard shard) {
        List<List<Saved>> chains = new ArrayList<>();
        for (ShardManifests.Manifest tip : ShardManifests.read(dir)) {
            List<Saved> chain = new ArrayList<>();
            for (ShardManifests.Manifest m : ShardManifests.chain(tip)) {
                Checkpoint file = SafeTensors.readCheckpoint(m.shardFile());
                m.checkShard(file);
                chain.add(new Saved(m.file(), m.shardFile(), m.json(), file.tensors()));
            }
            chains.add(chain);
        }
        for (List<Saved> chain : chains) {
            for (Saved s : chain) {
                check(s, shard);
            }
        }
        return chains;
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
            if (t.has("row_stats")) {
                requireShape(s, prefix + RowStats.SHOW, DType.F32, rows);
                requireShape(s, prefix + RowStats.CLICK, DType.F32, rows);
                requireShape(s, prefix + RowStats.UNSEEN, DType.I64, rows);
                requireShape(s, prefix + RowStats.LAST_STEP, DType.I64, rows);
            }
            if (t.has("removed")) {
                requireShape(s, prefix + "removed", DType.I64, t.path("removed").asLong());
            }
            if (t.path("filter").path("kind").asText().equals("counter")) {
                long pending = t.path("filter").path("pending").asLong();
                requireShape(s, prefix + "filter_ids", DType.I64, pending);
                requireShape(s, prefix + "filter_counts", DType.I64, pending);
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

    /**
     * Each saved server's chain in order (its full save's rows, then each delta's rows and removals), keeping the
     * rows that belong to this server; then the table's step and its admission filter's state from the tips.
     */
    private static void loadSparse(List<List<Saved>> chains, TableShard shard, SparseTableConfig c) {
        SparseTable table = shard.sparseTable(c.name());
        long step = 0;
        for (List<Saved> chain : chains) {
            step = Math.max(step, table(chain.getLast(), "sparse", c.name(), c.optimizer()).path("step").asLong());
        }
        table.restoreStep(step);
        for (List<Saved> chain : chains) {
            for (Saved s : chain) {
                putRows(s, shard, table, c, step);
                Tensor removed = s.tensors().get("sparse/" + c.name() + "/removed");
                if (removed != null) {
                    table.removeRows(mine(removed, shard));
                }
            }
        }
        for (int i = 0; i < chains.size(); i++) {
            Saved tip = chains.get(i).getLast();
            JsonNode filter = table(tip, "sparse", c.name(), c.optimizer()).path("filter");
            String prefix = "sparse/" + c.name() + "/";
            if (c.admission() instanceof RowAdmission.Counter && filter.path("kind").asText().equals("counter")) {
                Tensor ids = tip.tensors().get(prefix + "filter_ids");
                Tensor counts = tip.tensors().get(prefix + "filter_counts");
                List<long[]> kept = new ArrayList<>();
                for (long r = 0; r < ids.numel(); r++) {
                    if (KeyHash.serverOf(ids.getLong(r), shard.servers()) == shard.server()) {
                        kept.add(new long[]{ids.getLong(r), counts.getLong(r)});
                    }
                }
                table.putPending(kept.stream().mapToLong(e -> e[0]).toArray(),
                        kept.stream().mapToInt(e -> (int) e[1]).toArray());
            } else if (c.admission() instanceof RowAdmission.CountingBloom && filter.path("kind").asText().equals("cbf")
                    && i == shard.server()) {
                restoreBloom(tip, filter, shard, table, prefix);
            }
        }
    }

    /** A counting Bloom filter's counts follow only into the same layout: they cannot be split by id. */
    private static void restoreBloom(Saved tip, JsonNode filter, TableShard shard, SparseTable table, String prefix) {
        boolean sameServer = filter.path("servers").asInt() == shard.servers() && filter.path("server").asInt() == shard.server();
        Tensor counters = tip.tensors().get(prefix + "filter_counters");
        List<MemorySegment> slices = new ArrayList<>();
        long slice = filter.path("slice").asLong();
        if (counters != null && sameServer) {
            long wordsPerSlice = Math.ceilDiv(slice, Long.BYTES);
            for (int s = 0; s < filter.path("stripes").asInt(); s++) {
                slices.add(counters.segment().asSlice(s * wordsPerSlice * Long.BYTES, slice));
            }
        }
        if (!sameServer || !table.restoreBloom(slices)) {
            System.getLogger(ShardCheckpoint.class.getName()).log(System.Logger.Level.WARNING, "sparse table "
                    + table.name() + " (server " + shard.server() + "): the counting Bloom filter saved in "
                    + tip.manifestFile().getFileName() + " (" + filter.path("stripes").asInt() + " stripes of "
                    + slice + " counters, server " + filter.path("server").asInt() + " of "
                    + filter.path("servers").asInt() + ") does not fit this server's layout; its counts start from"
                    + " zero, the rows admitted so far stay");
        }
    }

    private static long[] mine(Tensor ids, TableShard shard) {
        List<Long> out = new ArrayList<>();
        for (long r = 0; r < ids.numel(); r++) {
            if (KeyHash.serverOf(ids.getLong(r), shard.servers()) == shard.server()) {
                out.add(ids.getLong(r));
            }
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    /** The rows of one saved shard that belong to this server, with their stats (or fresh ones stamped at {@code step}). */
    private static void putRows(Saved s, TableShard shard, SparseTable table, SparseTableConfig c, long step) {
        ServerOptimizer opt = c.optimizer();
        int slots = opt.slots().size();
        int recordFloats = Math.toIntExact(opt.recordFloats(c.dim()));
        int dataFloats = Math.toIntExact(table.dataFloats());
        boolean stats = table.rowStats().kept();
        String prefix = "sparse/" + c.name() + "/";
        Tensor keys = s.tensors().get(prefix + "keys");
        Tensor[] columns = new Tensor[1 + slots];
        columns[0] = s.tensors().get(prefix + "value");
        for (int k = 0; k < slots; k++) {
            columns[1 + k] = s.tensors().get(prefix + opt.slots().get(k));
        }
        Tensor[] scalars = opt.scalars().stream().map(n -> s.tensors().get(prefix + n)).toArray(Tensor[]::new);
        Tensor show = s.tensors().get(prefix + RowStats.SHOW);
        Tensor click = s.tensors().get(prefix + RowStats.CLICK);
        Tensor unseen = s.tensors().get(prefix + RowStats.UNSEEN);
        Tensor lastStep = s.tensors().get(prefix + RowStats.LAST_STEP);
        boolean savedStats = show != null && click != null && unseen != null && lastStep != null;
        // rows go to the table's owners in batches, one task per owner each
        int batch = 4096;
        long[] ids = new long[batch];
        float[] records = new float[batch * dataFloats];
        int held = 0;
        for (long r = 0; r < keys.numel(); r++) {
            long id = keys.getLong(r);
            if (KeyHash.serverOf(id, shard.servers()) != shard.server()) {
                continue;
            }
            int at = held * dataFloats;
            for (int k = 0; k <= slots; k++) {
                MemorySegment.copy(columns[k].segment(), F, r * c.dim() * Float.BYTES, records, at + k * c.dim(), c.dim());
            }
            for (int k = 0; k < scalars.length; k++) {
                records[at + (1 + slots) * c.dim() + k] = scalars[k].getFloat(r);
            }
            if (stats) {
                int st = at + recordFloats;
                records[st] = savedStats ? show.getFloat(r) : 0f;
                records[st + 1] = savedStats ? click.getFloat(r) : 0f;
                records[st + 2] = Float.intBitsToFloat(savedStats ? (int) unseen.getLong(r) : 0);
                records[st + 3] = Float.intBitsToFloat((int) (savedStats ? lastStep.getLong(r) : step));
            }
            ids[held++] = id;
            if (held == batch) {
                table.putRecords(ids, records, held);
                held = 0;
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
