package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.fleet4j.core.io.CheckpointException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Incremental saves: after a full save each save writes only the rows changed since the one before (and the ids
 * evicted), its manifest naming that save as its parent; a load follows the chain, into any number of servers.
 */
class IncrementalCheckpointTest {
    private static final int DIM = 4;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final DenseTableConfig FC = new DenseTableConfig("fc.w", new long[]{30, 4},
            new ServerOptimizer.Adam(0.01f), RowInitializer.uniform(-1f, 1f, 5));
    /** Rows older than 3 steps go at each save, so deltas carry removals too. */
    private static final SparseTableConfig EMB = new SparseTableConfig("emb", DIM, new ServerOptimizer.Adagrad(0.05f),
            RowInitializer.normal(0f, 0.1f, 11)).withRows(new RowAdmission.Everyone(), RowEviction.stepsToLive(3));

    @TempDir
    Path dir;

    private static List<TableShard> servers(int n) {
        List<TableShard> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new TableShard(i, n, List.of(FC), List.of(EMB), 16));
        }
        return out;
    }

    private static void saveAll(List<TableShard> servers, Path to, boolean incremental, long step) {
        SaveIdentity save = SaveIdentity.fresh("test", 0, step);
        for (TableShard s : servers) {
            s.save(to, incremental ? save.asIncremental() : save);
        }
    }

    /** One step of every server: a push of each id it owns among {@code ids} and of every dense block. */
    private static void step(List<TableShard> servers, long[] ids, Random r) {
        for (TableShard s : servers) {
            long[] mine = java.util.Arrays.stream(ids).filter(id -> KeyHash.serverOf(id, servers.size()) == s.server())
                    .toArray();
            float[] g = new float[mine.length * DIM];
            for (int j = 0; j < g.length; j++) {
                g[j] = (float) r.nextGaussian();
            }
            s.pushSparse("emb", Rows.ids(mine), mine.length, Rows.floats(g));
            for (DenseBlock b : s.denseBlocks()) {
                float[] d = new float[(int) b.spec().numel()];
                for (int j = 0; j < d.length; j++) {
                    d[j] = (float) r.nextGaussian();
                }
                s.pushDense(b.spec().param(), b.spec().block(), Rows.floats(d));
            }
        }
    }

    private static long[] range(long from, int n) {
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = (from + i) * 1_000_003L;
        }
        return out;
    }

    /** Every sparse row over all servers: id to record and stats. */
    private static Map<Long, List<Float>> rows(List<TableShard> servers) {
        Map<Long, List<Float>> out = new HashMap<>();
        for (TableShard s : servers) {
            s.sparseTable("emb").forEachRow((id, data) -> {
                List<Float> values = new ArrayList<>();
                for (float f : data.toArray(ValueLayout.JAVA_FLOAT)) {
                    values.add(f);
                }
                out.put(id, values);
            });
        }
        return out;
    }

    private static List<Float> dense(List<TableShard> servers) {
        float[] whole = new float[(int) FC.numel() * 3];
        for (TableShard s : servers) {
            for (DenseBlock b : s.denseBlocks()) {
                float[] rec = b.snapshot();
                int m = (int) b.spec().numel();
                for (int k = 0; k < 3; k++) {
                    System.arraycopy(rec, k * m, whole, k * (int) FC.numel() + (int) b.spec().offset(), m);
                }
            }
        }
        List<Float> out = new ArrayList<>();
        for (float f : whole) {
            out.add(f);
        }
        return out;
    }

    private JsonNode sparseManifest(Path save, int server, int servers) throws IOException {
        return JSON.readTree(save.resolve("pserver-" + server + "-of-" + servers + ".json").toFile()).path("sparse").get(0);
    }

    @Test
    void aChainOfDeltasRestoresTheTablesIntoOneTwoAndThreeServers() throws IOException {
        List<TableShard> two = servers(2);
        Random r = new Random(1);
        step(two, range(0, 1000), r);
        step(two, range(0, 1000), r);
        saveAll(two, dir.resolve("full"), false, 2);
        step(two, range(0, 10), r);
        step(two, range(2000, 5), r);
        saveAll(two, dir.resolve("delta1"), true, 4);   // step 4: rows 10..999 (step 2) are not yet 3 steps old
        step(two, range(5, 10), r);
        step(two, range(5, 10), r);                      // step 6: ids of step 2 only are more than 3 steps old
        saveAll(two, dir.resolve("delta2"), true, 6);
        long full = 0;
        long changed1 = 0;
        long changed2 = 0;
        long removed2 = 0;
        for (int s = 0; s < 2; s++) {
            full += sparseManifest(dir.resolve("full"), s, 2).path("rows").asLong();
            changed1 += sparseManifest(dir.resolve("delta1"), s, 2).path("rows").asLong();
            changed2 += sparseManifest(dir.resolve("delta2"), s, 2).path("rows").asLong();
            removed2 += sparseManifest(dir.resolve("delta2"), s, 2).path("removed").asLong();
        }
        assertEquals(1000, full);
        assertEquals(15, changed1, "10 rows updated and 5 new since the full save");
        assertEquals(10, changed2, "rows 5..14 updated since the first delta");
        assertEquals(990 - 5, removed2, "rows 10..999 last updated at step 2, evicted at step 6 (3 steps to live)");
        Map<Long, List<Float>> want = rows(two);
        assertEquals(20, want.size(), "0..14 and 2000..2004");
        for (int n : new int[]{1, 2, 3}) {
            List<TableShard> loaded = servers(n);
            for (TableShard s : loaded) {
                s.load(dir.resolve("delta2"));
            }
            assertEquals(want, rows(loaded), "sparse rows, loaded into " + n + " servers from the chain");
            assertEquals(dense(two), dense(loaded), "dense, loaded into " + n + " servers from the chain");
        }
    }

    @Test
    void aSaveAfterALoadFromAChainChainsOnFromIt() throws IOException {
        List<TableShard> one = servers(1);
        Random r = new Random(2);
        step(one, range(0, 100), r);
        saveAll(one, dir.resolve("a"), false, 1);
        step(one, range(0, 3), r);
        saveAll(one, dir.resolve("b"), true, 2);
        List<TableShard> restarted = servers(1);
        restarted.getFirst().load(dir.resolve("b"));
        step(restarted, range(50, 2), r);
        saveAll(restarted, dir.resolve("c"), true, 3);
        assertEquals(2, sparseManifest(dir.resolve("c"), 0, 1).path("rows").asLong(), "only what changed since the load");
        List<TableShard> again = servers(1);
        again.getFirst().load(dir.resolve("c"));
        assertEquals(rows(restarted), rows(again));
    }

    @Test
    void aFailedSaveLeavesItsRowsToTheNextOne() throws IOException {
        List<TableShard> one = servers(1);
        Random r = new Random(3);
        step(one, range(0, 100), r);
        saveAll(one, dir.resolve("a"), false, 1);
        step(one, range(0, 7), r);
        Path broken = dir.resolve("broken");
        Files.createDirectories(broken.resolve("pserver-0-of-1.safetensors"));   // the shard file cannot be written
        assertThrows(RuntimeException.class, () -> saveAll(one, broken, true, 2));
        saveAll(one, dir.resolve("b"), true, 2);
        assertEquals(7, sparseManifest(dir.resolve("b"), 0, 1).path("rows").asLong(), "the 7 rows the failed save held");
        List<TableShard> loaded = servers(1);
        loaded.getFirst().load(dir.resolve("b"));
        assertEquals(rows(one), rows(loaded));
    }

    @Test
    void aChainWithAMissingOrOverwrittenParentIsRefusedNamingIt() throws IOException {
        List<TableShard> one = servers(1);
        Random r = new Random(4);
        step(one, range(0, 10), r);
        saveAll(one, dir.resolve("a"), false, 1);
        step(one, range(0, 3), r);
        saveAll(one, dir.resolve("b"), true, 2);
        // another job's full save over the parent: its save id is not the one the delta names
        List<TableShard> other = servers(1);
        step(other, range(0, 10), r);
        saveAll(other, dir.resolve("a"), false, 1);
        CheckpointException e = assertThrows(CheckpointException.class, () -> servers(1).getFirst().load(dir.resolve("b")));
        assertTrue(e.getMessage().contains("the chain is broken") && e.getMessage().contains(dir.resolve("a").toString()),
                e.getMessage());
        try (Stream<Path> files = Files.list(dir.resolve("a"))) {
            for (Path f : files.toList()) {
                Files.delete(f);
            }
        }
        Files.delete(dir.resolve("a"));
        e = assertThrows(CheckpointException.class, () -> servers(1).getFirst().load(dir.resolve("b")));
        assertEquals("checkpoint " + dir.resolve("b/pserver-0-of-1.json") + ": is an incremental save whose parent "
                + dir.resolve("a/pserver-0-of-1.json") + " is missing; restore needs the whole chain back to a full save"
                + " (keep the folders its manifests name as parents)", e.getMessage());
    }
}
