package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.fleet4j.core.io.CheckpointException;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.ops.UpdateRules;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShardCheckpointTest {
    private static final int DIM = 4;
    private static final DenseTableConfig FC = new DenseTableConfig("fc.w", new long[]{30, 4},
            new ServerOptimizer.Adam(0.01f), RowInitializer.uniform(-1f, 1f, 5));
    private static final DenseTableConfig BIAS = new DenseTableConfig("fc.b", new long[]{4},
            new ServerOptimizer.Adam(0.01f), RowInitializer.constant(0f));
    private static final SparseTableConfig EMB = new SparseTableConfig("emb", DIM, new ServerOptimizer.Adam(0.05f),
            RowInitializer.normal(0f, 0.1f, 11));
    private static final SparseTableConfig WIDE = new SparseTableConfig("wide", 1, new ServerOptimizer.Sgd(0.1f),
            RowInitializer.constant(0f));

    @TempDir
    Path dir;

    private static List<TableShard> servers(int n) {
        List<TableShard> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            // a 16-element minimum block cuts fc.w (120 elements) into as many blocks as there are servers
            out.add(new TableShard(i, n, List.of(FC, BIAS), List.of(EMB, WIDE), 16));
        }
        return out;
    }

    /** Every server writes its shard of one save, as the servers of a job do when a worker asks them. */
    private static void saveAll(List<TableShard> servers, Path to) {
        saveAll(servers, to, SaveIdentity.fresh("test", 1, 5));
    }

    private static void saveAll(List<TableShard> servers, Path to, SaveIdentity save) {
        for (TableShard s : servers) {
            s.save(to, save);
        }
    }

    /** A few steps of pushes routed as a worker would: sparse ids by hash, dense blocks by plan. */
    private static void train(List<TableShard> servers) {
        Random r = new Random(3);
        List<DenseSlicing.Block> plan = DenseSlicing.planTables(List.of(FC, BIAS), servers.size(), 16);
        for (int step = 0; step < 5; step++) {
            for (int k = 0; k < 40; k++) {
                long id = r.nextInt(500) * 1_000_003L;
                float[] g = new float[DIM];
                for (int j = 0; j < DIM; j++) {
                    g[j] = (float) r.nextGaussian();
                }
                TableShard owner = servers.get(KeyHash.serverOf(id, servers.size()));
                owner.pushSparse("emb", Rows.ids(id), 1, Rows.floats(g));
                owner.pushSparse("wide", Rows.ids(id), 1, Rows.floats(g[0]));
            }
            for (DenseSlicing.Block b : plan) {
                float[] g = new float[(int) b.numel()];
                for (int j = 0; j < g.length; j++) {
                    g[j] = (float) r.nextGaussian();
                }
                servers.get(b.server()).pushDense(b.param(), b.block(), Rows.floats(g));
            }
        }
    }

    /** Every sparse row of a table over all servers: id to whole record. */
    private static Map<Long, List<Float>> sparseRows(List<TableShard> servers, String table) {
        Map<Long, List<Float>> rows = new HashMap<>();
        for (TableShard s : servers) {
            s.sparseTable(table).forEachRow((id, rec) -> {
                List<Float> values = new ArrayList<>();
                for (float f : rec.toArray(ValueLayout.JAVA_FLOAT)) {
                    values.add(f);
                }
                assertTrue(rows.put(id, values) == null, "id " + id + " is on one server only");
                assertEquals(s.server(), KeyHash.serverOf(id, servers.size()), "id " + id + " is on its owner");
            });
        }
        return rows;
    }

    /** A dense table's value and slots reassembled, and the scalars of its first block. */
    private static List<Float> denseState(List<TableShard> servers, DenseTableConfig c) {
        int n = (int) c.numel();
        int parts = 1 + c.optimizer().slots().size();
        float[] whole = new float[parts * n];
        float[] scalars = null;
        for (TableShard s : servers) {
            for (DenseBlock b : s.denseBlocks()) {
                if (b.spec().param().equals(c.name())) {
                    float[] rec = b.snapshot();
                    int m = (int) b.spec().numel();
                    for (int k = 0; k < parts; k++) {
                        System.arraycopy(rec, k * m, whole, k * n + (int) b.spec().offset(), m);
                    }
                    if (b.spec().offset() == 0) {
                        scalars = Arrays.copyOfRange(rec, parts * m, rec.length);
                    }
                }
            }
        }
        List<Float> out = new ArrayList<>();
        for (float f : whole) {
            out.add(f);
        }
        for (float f : scalars) {
            out.add(f);
        }
        return out;
    }

    @Test
    void savedWithTwoServersLoadsIdenticallyIntoOneAndThree() throws IOException {
        List<TableShard> two = servers(2);
        train(two);
        saveAll(two, dir);
        for (int n : new int[]{1, 2, 3}) {
            List<TableShard> loaded = servers(n);
            for (TableShard s : loaded) {
                s.load(dir);
            }
            for (String t : new String[]{"emb", "wide"}) {
                Map<Long, List<Float>> want = sparseRows(two, t);
                assertTrue(want.size() > 100);
                assertEquals(want, sparseRows(loaded, t), t + " loaded into " + n + " servers");
            }
            for (DenseTableConfig c : List.of(FC, BIAS)) {
                assertEquals(denseState(two, c), denseState(loaded, c), c.name() + " loaded into " + n + " servers");
            }
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of("pserver-0-of-2.json", "pserver-0-of-2.safetensors", "pserver-1-of-2.json",
                    "pserver-1-of-2.safetensors"), files.map(p -> p.getFileName().toString()).sorted().toList(),
                    "no temporary files are left");
        }
    }

    @Test
    void emptyTablesRoundTrip() {
        List<TableShard> two = servers(2);
        saveAll(two, dir);
        TableShard one = servers(1).getFirst();
        one.load(dir);
        assertEquals(0, one.sparseTable("emb").keys());
        assertEquals(denseState(two, FC), denseState(List.of(one), FC), "initial dense values come back");
    }

    /** Value after k Adagrad steps of gradient 1 from 0, through the same update rule. */
    private static float[] adagradAfter(int maxSteps, float lr) {
        float[] values = new float[maxSteps + 1];
        MemorySegment p = Rows.zeros(1);
        MemorySegment m = Rows.zeros(1);
        MemorySegment g = Rows.floats(1f);
        for (int k = 1; k <= maxSteps; k++) {
            UpdateRules.adagrad(p, m, g, 1, lr, 1e-6f);
            values[k] = p.getAtIndex(ValueLayout.JAVA_FLOAT, 0);
        }
        return values;
    }

    @Test
    void aSnapshotTakenWhilePushesGoOnHasEachRowsValueAndSlotFromTheSameUpdate() throws Exception {
        SparseTableConfig table = new SparseTableConfig("emb", DIM, new ServerOptimizer.Adagrad(0.1f),
                RowInitializer.constant(0f), 4);
        DenseTableConfig dense = new DenseTableConfig("d", new long[]{256}, new ServerOptimizer.Adagrad(0.1f),
                RowInitializer.constant(0f));
        TableShard shard = new TableShard(0, 1, List.of(dense), List.of(table));
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        CountDownLatch started = new CountDownLatch(3);
        List<Future<?>> pushers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            int me = t;
            pushers.add(pool.submit(() -> {
                Random r = new Random(me);
                MemorySegment ones = Rows.floats(new float[256]);
                ones.elements(ValueLayout.JAVA_FLOAT).forEach(e -> e.set(ValueLayout.JAVA_FLOAT, 0, 1f));
                started.countDown();
                while (!stop.get()) {
                    // distinct ids: each pushed row gets gradient 1, so its moment counts its updates
                    long[] ids = new long[16];
                    int first = r.nextInt(48);
                    for (int i = 0; i < ids.length; i++) {
                        ids[i] = first + i;
                    }
                    shard.pushSparse("emb", Rows.ids(ids), ids.length, ones.asSlice(0, ids.length * DIM * 4L));
                    shard.pushDense("d", 0, ones);
                }
                return null;
            }));
        }
        assertTrue(started.await(30, TimeUnit.SECONDS), "the pushing threads did not start within 30 s");
        for (int save = 0; save < 5; save++) {
            // a full save, then incremental ones chained to it, each in a folder of its own
            SaveIdentity id = SaveIdentity.fresh("test", 0, save);
            Path to = dir.resolve("save-" + save);
            shard.save(to, save == 0 ? id : id.asIncremental());
            Map<String, Tensor> saved = SafeTensors.read(to.resolve("pserver-0-of-1.safetensors"));
            assertTrue(saved.get("sparse/emb/value").numel() > 0, "save " + save + " holds rows");
            assertConsistent(saved.get("sparse/emb/value"), saved.get("sparse/emb/moment"), "sparse row");
            assertConsistent(saved.get("dense/d/0/value"), saved.get("dense/d/0/moment"), "dense block");
        }
        stop.set(true);
        for (Future<?> f : pushers) {
            f.get(30, TimeUnit.SECONDS);
        }
        pool.shutdown();
    }

    /** With gradient 1 the moment counts the updates; the value must be the one after exactly that many. */
    private static void assertConsistent(Tensor value, Tensor moment, String what) {
        float[] v = value.toFloatArray();
        float[] m = moment.toFloatArray();
        int max = 0;
        for (float f : m) {
            max = Math.max(max, (int) f);
        }
        float[] expected = adagradAfter(max, 0.1f);
        int width = (int) (value.numel() / Math.max(1, value.dim(0)));
        for (int i = 0; i < v.length; i++) {
            int k = (int) m[i];
            assertEquals(expected[k], v[i], what + " " + i / width + " element " + i % width + " has moment " + k
                    + " but a value from another number of updates");
            assertEquals(m[i - i % width], m[i], what + " " + i / width + " has slots from different updates");
        }
    }

    private void saveTwo() {
        List<TableShard> two = servers(2);
        train(two);
        saveAll(two, dir);
    }

    private CheckpointException loadFails() {
        return assertThrows(CheckpointException.class, () -> servers(1).getFirst().load(dir));
    }

    @Test
    void aMissingShardFileIsNamed() throws IOException {
        saveTwo();
        Files.delete(dir.resolve("pserver-1-of-2.safetensors"));
        CheckpointException e = loadFails();
        assertTrue(e.getMessage().contains("pserver-1-of-2.safetensors") && e.getMessage().contains("does not exist"),
                e.getMessage());
    }

    @Test
    void aMissingManifestIsNamed() throws IOException {
        saveTwo();
        Files.delete(dir.resolve("pserver-0-of-2.json"));
        CheckpointException e = loadFails();
        assertTrue(e.getMessage().contains("pserver-0-of-2.json") && e.getMessage().contains("is missing"), e.getMessage());
    }

    @Test
    void aTruncatedShardIsNamed() throws IOException {
        saveTwo();
        Path file = dir.resolve("pserver-0-of-2.safetensors");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate(ch.size() - 100);
        }
        CheckpointException e = loadFails();
        assertTrue(e.getMessage().contains("pserver-0-of-2.safetensors"), e.getMessage());
    }

    @Test
    void aTensorOfTheWrongShapeIsNamed() {
        saveTwo();
        Path file = dir.resolve("pserver-1-of-2.safetensors");
        Map<String, Tensor> tensors = new LinkedHashMap<>(SafeTensors.read(file));
        Tensor value = tensors.get("sparse/emb/value");
        tensors.put("sparse/emb/value", value.rows(0, value.dim(0) - 1));
        SafeTensors.write(file, tensors, SafeTensors.readCheckpoint(file).metadata());
        CheckpointException e = loadFails();
        assertTrue(e.getMessage().contains("pserver-1-of-2.safetensors") && e.getMessage().contains("sparse/emb/value"),
                e.getMessage());
    }

    @Test
    void anotherOptimizersStateIsRefused() {
        saveTwo();
        SparseTableConfig adagrad = new SparseTableConfig("emb", DIM, new ServerOptimizer.Adagrad(0.05f), EMB.initializer());
        TableShard other = new TableShard(0, 1, List.of(FC, BIAS), List.of(adagrad, WIDE), 16);
        CheckpointException e = assertThrows(CheckpointException.class, () -> other.load(dir));
        assertTrue(e.getMessage().contains("pserver-0-of-2.json") && e.getMessage().contains("saved with optimizer adam"),
                e.getMessage());
    }

    /** Shard 0 of one save and shard 1 of a later one (two more training rounds) in one folder. */
    private Path mixedFolder() throws IOException {
        List<TableShard> two = servers(2);
        train(two);
        Path early = Files.createDirectories(dir.resolve("early"));
        saveAll(two, early, new SaveIdentity("job-a", 1, 5, "early-save"));
        train(two);
        Path late = Files.createDirectories(dir.resolve("late"));
        saveAll(two, late, new SaveIdentity("job-a", 2, 10, "late-save"));
        Path mixed = Files.createDirectories(dir.resolve("mixed"));
        for (String f : List.of("pserver-0-of-2.json", "pserver-0-of-2.safetensors")) {
            Files.copy(early.resolve(f), mixed.resolve(f));
        }
        for (String f : List.of("pserver-1-of-2.json", "pserver-1-of-2.safetensors")) {
            Files.copy(late.resolve(f), mixed.resolve(f));
        }
        return mixed;
    }

    @Test
    void aFolderMixingTheShardsOfTwoSavesIsRefusedNamingBothFiles() throws IOException {
        Path mixed = mixedFolder();
        TableShard loading = servers(2).getFirst();
        CheckpointException e = assertThrows(CheckpointException.class, () -> loading.load(mixed));
        assertEquals("checkpoint " + mixed + ": pserver-0-of-2.json and pserver-1-of-2.json come from different saves"
                + " (save id early-save vs late-save, epoch 1 vs 2, step 5 vs 10); a folder must hold the shards of one"
                + " save: load the folder that save wrote, whole", e.getMessage());
        assertEquals(0, loading.sparseTable("emb").keys(), "nothing was loaded");
        assertThrows(CheckpointException.class, () -> SavedValues.read(mixed), "nor read for an inference model");
    }

    @Test
    void aShardFileSwappedWithoutItsManifestIsRefusedNamingIt() throws IOException {
        Path mixed = mixedFolder();
        Files.copy(dir.resolve("early/pserver-1-of-2.json"), mixed.resolve("pserver-1-of-2.json"),
                StandardCopyOption.REPLACE_EXISTING);
        CheckpointException e = assertThrows(CheckpointException.class, () -> servers(1).getFirst().load(mixed));
        assertEquals("checkpoint " + mixed.resolve("pserver-1-of-2.safetensors") + ": belongs to save 'late-save', but"
                + " its manifest pserver-1-of-2.json names save 'early-save'; the shard file and its manifest must come"
                + " from one save", e.getMessage());
    }

    @Test
    void shardsOfJobsWithOtherTablesAreRefusedNamingTheTable() throws IOException {
        saveTwo();
        SparseTableConfig wider = new SparseTableConfig("emb", 8, EMB.optimizer(), EMB.initializer());
        Path other = Files.createDirectories(dir.resolve("other"));
        new TableShard(1, 2, List.of(FC, BIAS), List.of(wider, WIDE), 16).save(other, SaveIdentity.fresh("job-b", 1, 5));
        Files.copy(other.resolve("pserver-1-of-2.json"), dir.resolve("pserver-1-of-2.json"), StandardCopyOption.REPLACE_EXISTING);
        Files.copy(other.resolve("pserver-1-of-2.safetensors"), dir.resolve("pserver-1-of-2.safetensors"),
                StandardCopyOption.REPLACE_EXISTING);
        CheckpointException e = loadFails();
        assertTrue(e.getMessage().contains("pserver-0-of-2.json and pserver-1-of-2.json come from different saves")
                && e.getMessage().contains("job test vs job-b")
                && e.getMessage().contains("sparse table emb dim 4, adam [\"moment1\",\"moment2\"]"), e.getMessage());
    }

    @Test
    void aManifestOfTheFirstFormatIsRefusedSayingWhy() throws IOException {
        saveTwo();
        Path manifest = dir.resolve("pserver-0-of-2.json");
        Files.writeString(manifest, Files.readString(manifest).replace("\"version\" : 3", "\"version\" : 1"));
        CheckpointException e = loadFails();
        assertEquals("checkpoint " + manifest + ": has manifest version 1, which records no save identity, so its shards"
                + " cannot be checked to come from one save; this Fleet4J reads versions 2 to 3: save the tables again with it",
                e.getMessage());
    }

    @Test
    void aDirectoryWithoutManifestsIsNamed() {
        CheckpointException e = loadFails();
        assertTrue(e.getMessage().contains(dir.toString()) && e.getMessage().contains("no parameter-server manifest"),
                e.getMessage());
    }
}
