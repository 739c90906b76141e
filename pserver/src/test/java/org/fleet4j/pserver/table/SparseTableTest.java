package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class SparseTableTest {
    private static final int DIM = 4;

    private static TableShard shard(ServerOptimizer opt, RowInitializer init, int stripes) {
        return new TableShard(0, 1, List.of(), List.of(new SparseTableConfig("emb", DIM, opt, init, stripes)));
    }

    private static float[] pull(TableShard s, long... ids) {
        MemorySegment out = Rows.zeros((long) ids.length * DIM);
        s.pullSparse("emb", Rows.ids(ids), ids.length, out);
        return Rows.toArray(out);
    }

    @Test
    void aPullCreatesRowsWithTheInitializerAndKeepsThem() {
        RowInitializer init = RowInitializer.uniform(-1f, 1f, 3);
        TableShard s = shard(new ServerOptimizer.Sgd(1f), init, 16);
        assertNull(s.sparseTable("emb").peekRecord(12), "nothing exists before a pull");
        float[] rows = pull(s, 12, -5, 12);
        assertEquals(2, s.sparseTable("emb").keys());
        for (int j = 0; j < DIM; j++) {
            assertEquals(init.value(12, j), rows[j]);
            assertEquals(init.value(-5, j), rows[DIM + j]);
            assertEquals(init.value(12, j), rows[2 * DIM + j]);
        }
        s.pushSparse("emb", Rows.ids(12), 1, Rows.floats(1, 2, 3, 4));
        float[] after = pull(s, 12);
        for (int j = 0; j < DIM; j++) {
            assertEquals(init.value(12, j) - (j + 1), after[j]);
        }
    }

    @Test
    void aRowIsTheSameWhicheverServerAndOrderCreatesIt() {
        RowInitializer init = RowInitializer.normal(0f, 0.1f, 9);
        TableShard a = shard(new ServerOptimizer.Adagrad(0.1f), init, 16);
        TableShard b = shard(new ServerOptimizer.Adagrad(0.1f), init, 1);
        float[] forward = pull(a, 1, 2, 3, 1L << 40);
        float[] backward = pull(b, 1L << 40, 3, 2, 1);
        for (int i = 0; i < 4; i++) {
            assertArrayEquals(Arrays.copyOfRange(forward, i * DIM, (i + 1) * DIM),
                    Arrays.copyOfRange(backward, (3 - i) * DIM, (4 - i) * DIM), "row " + i);
        }
        assertNotEquals(forward[0], forward[DIM], "different ids, different rows");
    }

    @Test
    void initializersHaveTheirDistributions() {
        RowInitializer uniform = RowInitializer.uniform(-0.5f, 1.5f, 1);
        RowInitializer normal = RowInitializer.normal(1f, 2f, 1);
        double sumU = 0;
        double sumN = 0;
        double sumN2 = 0;
        int n = 200_000;
        for (int id = 0; id < n; id++) {
            float u = uniform.value(id, 3);
            assertTrue(u >= -0.5f && u < 1.5f, "uniform value " + u);
            sumU += u;
            float v = normal.value(id, 3);
            sumN += v;
            sumN2 += v * v;
        }
        assertEquals(0.5, sumU / n, 0.01);
        assertEquals(1.0, sumN / n, 0.02);
        assertEquals(2.0, Math.sqrt(sumN2 / n - Math.pow(sumN / n, 2)), 0.02);
        assertNotEquals(uniform.value(5, 0), RowInitializer.uniform(-0.5f, 1.5f, 2).value(5, 0), "the seed matters");
        assertEquals(0.25f, RowInitializer.constant(0.25f).value(77, 3));
    }

    @Test
    void duplicateIdsInOnePushAreSummedFirst() {
        ServerOptimizer adagrad = new ServerOptimizer.Adagrad(0.5f);
        TableShard dup = shard(adagrad, RowInitializer.constant(1f), 16);
        TableShard merged = shard(adagrad, RowInitializer.constant(1f), 16);
        dup.pushSparse("emb", Rows.ids(3, 8, 3), 3, Rows.floats(1, 2, 3, 4, 9, 9, 9, 9, 0.5f, 0.5f, 0.5f, 0.5f));
        merged.pushSparse("emb", Rows.ids(3, 8), 2, Rows.floats(1.5f, 2.5f, 3.5f, 4.5f, 9, 9, 9, 9));
        for (long id : new long[]{3, 8}) {
            assertArrayEquals(merged.sparseTable("emb").peekRecord(id), dup.sparseTable("emb").peekRecord(id), "id " + id);
        }
        TableShard twice = shard(adagrad, RowInitializer.constant(1f), 16);
        twice.pushSparse("emb", Rows.ids(3), 1, Rows.floats(1, 2, 3, 4));
        twice.pushSparse("emb", Rows.ids(3), 1, Rows.floats(0.5f, 0.5f, 0.5f, 0.5f));
        assertNotEquals(twice.sparseTable("emb").peekRecord(3)[0], dup.sparseTable("emb").peekRecord(3)[0],
                "applying each duplicate on its own would be a different update");
    }

    @Test
    void repeatsFarApartAndInEveryStripeAreSummedInOrder() {
        // 3,000 pushes of 500 ids, each id three times at positions 1,000 apart: every stripe sees repeats, in
        // different 64-id blocks; the result must be the push of each id's sum, added in the order the repeats came
        ServerOptimizer adam = new ServerOptimizer.Adam(0.1f);
        TableShard dup = shard(adam, RowInitializer.constant(0.5f), 4);
        TableShard merged = shard(adam, RowInitializer.constant(0.5f), 4);
        int distinct = 500;
        long[] ids = new long[3 * distinct];
        float[] grads = new float[3 * distinct * DIM];
        float[] sums = new float[distinct * DIM];
        long[] once = new long[distinct];
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(7);
        for (int copy = 0; copy < 3; copy++) {
            for (int d = 0; d < distinct; d++) {
                int at = copy * distinct + d;
                ids[at] = d * 131L;
                once[d] = d * 131L;
                for (int j = 0; j < DIM; j++) {
                    float g = (float) rnd.nextDouble(-1, 1);
                    grads[at * DIM + j] = g;
                    sums[d * DIM + j] += g;
                }
            }
        }
        dup.pushSparse("emb", MemorySegment.ofArray(ids), ids.length, MemorySegment.ofArray(grads));
        merged.pushSparse("emb", MemorySegment.ofArray(once), distinct, MemorySegment.ofArray(sums));
        for (long id : once) {
            assertArrayEquals(merged.sparseTable("emb").peekRecord(id), dup.sparseTable("emb").peekRecord(id), "id " + id);
        }
        // and a push without repeats after one with them
        dup.pushSparse("emb", MemorySegment.ofArray(once), distinct, MemorySegment.ofArray(sums));
        merged.pushSparse("emb", MemorySegment.ofArray(once), distinct, MemorySegment.ofArray(sums));
        for (long id : once) {
            assertArrayEquals(merged.sparseTable("emb").peekRecord(id), dup.sparseTable("emb").peekRecord(id), "id " + id);
        }
    }

    @Test
    void aPushReusesItsPullsLookupOnlyForTheSameIdsAndStripes() {
        ServerOptimizer sgd = new ServerOptimizer.Sgd(0.5f);
        TableShard reuse = shard(sgd, RowInitializer.uniform(-1f, 1f, 5), 8);
        TableShard plain = shard(sgd, RowInitializer.uniform(-1f, 1f, 5), 8);
        SparseTable t = reuse.sparseTable("emb");
        long[] a = new long[300];
        long[] b = new long[300];
        float[] g = new float[300 * DIM];
        for (int i = 0; i < a.length; i++) {
            a[i] = i * 17L;
            b[i] = i * 17L + 5;
            for (int j = 0; j < DIM; j++) {
                g[i * DIM + j] = (i % 7 - 3) * 0.25f + j;
            }
        }
        List<SparseTable.Lookup> kept = new java.util.ArrayList<>();
        MemorySegment out = Rows.zeros((long) a.length * DIM);
        ShardOwners.join(t.pullAsync(Rows.ids(a), a.length, out, kept::add));
        pull(plain, a);
        // the same ids: the pull's rows are used, and the push lands where a plain push does
        ShardOwners.join(t.pushAsync(Rows.ids(a), a.length, MemorySegment.ofArray(g), kept.getLast()));
        plain.pushSparse("emb", Rows.ids(a), a.length, MemorySegment.ofArray(g));
        assertEquals(1, t.reusedLookups());
        // other ids of the same count given the same lookup: compared, not trusted, so found afresh
        ShardOwners.join(t.pushAsync(Rows.ids(b), b.length, MemorySegment.ofArray(g), kept.getLast()));
        plain.pushSparse("emb", Rows.ids(b), b.length, MemorySegment.ofArray(g));
        assertEquals(1, t.reusedLookups(), "a lookup of other ids is not used");
        // new stripes (the owners changed) between the pull and the push: found afresh
        ShardOwners.join(t.pullAsync(Rows.ids(a), a.length, out, kept::add));
        reuse.runOn(List.<java.util.concurrent.Executor>of(Runnable::run, Runnable::run, Runnable::run));
        ShardOwners.join(t.pushAsync(Rows.ids(a), a.length, MemorySegment.ofArray(g), kept.getLast()));
        plain.pushSparse("emb", Rows.ids(a), a.length, MemorySegment.ofArray(g));
        assertEquals(1, t.reusedLookups(), "a lookup of old stripes is not used");
        for (long id : a) {
            assertArrayEquals(plain.sparseTable("emb").peekRecord(id), t.peekRecord(id), "id " + id);
        }
        for (long id : b) {
            assertArrayEquals(plain.sparseTable("emb").peekRecord(id), t.peekRecord(id), "id " + id);
        }
    }

    @Test
    void manyRowsSurviveTheIndexGrowing() {
        TableShard s = shard(new ServerOptimizer.Sgd(1f), RowInitializer.constant(0f), 4);
        int n = 50_000;
        long[] ids = new long[n];
        float[] grads = new float[n * DIM];
        for (int i = 0; i < n; i++) {
            ids[i] = i * 7919L;
            grads[i * DIM] = i;
        }
        s.pushSparse("emb", Rows.ids(ids), n, Rows.floats(grads));
        assertEquals(n, s.sparseTable("emb").keys());
        float[] rows = pull(s, ids);
        for (int i = 0; i < n; i++) {
            assertEquals(-i, rows[i * DIM], "id " + ids[i]);
        }
        assertEquals(n, s.sparseTable("emb").keys(), "pulling existing ids creates nothing");
    }

    @Test
    void statsCountKeysAndBytes() {
        TableShard s = new TableShard(0, 1,
                List.of(new DenseTableConfig("fc", new long[]{10, 3}, new ServerOptimizer.Adam(0.1f), RowInitializer.constant(0f))),
                List.of(new SparseTableConfig("emb", DIM, new ServerOptimizer.Adagrad(0.1f), RowInitializer.constant(0f))));
        pull(s, 1, 2, 3);
        List<TableStats> stats = s.stats();
        assertEquals("fc", stats.get(0).table());
        assertEquals(30, stats.get(0).keys());
        assertEquals((30 * 3 + 2) * 4, stats.get(0).bytes(), "value, two moments and two beta powers");
        assertEquals(new TableStats("emb", "sparse", 3, s.sparseTable("emb").bytes()), stats.get(1));
    }

    @Test
    void unknownTablesAndBadSizesAreNamed() {
        TableShard s = shard(new ServerOptimizer.Sgd(1f), RowInitializer.constant(0f), 16);
        TableException e = assertThrows(TableException.class, () -> pull(sLike(s), 1));
        assertTrue(e.getMessage().contains("no sparse table emb") && e.getMessage().contains("[clicks]"), e.getMessage());
        e = assertThrows(TableException.class,
                () -> s.pushSparse("emb", Rows.ids(1, 2), 2, Rows.floats(1, 2, 3, 4)));
        assertTrue(e.getMessage().contains("sparse table emb") && e.getMessage().contains("2 ids of dimension 4"), e.getMessage());
        e = assertThrows(TableException.class, () -> s.pullDense("fc", 0, Rows.zeros(4)));
        assertTrue(e.getMessage().contains("no dense table fc"), e.getMessage());
    }

    @Test
    void anIdOfAnotherServerIsRefusedAndNamed() {
        TableShard s = new TableShard(1, 3, List.of(), List.of(new SparseTableConfig("emb", DIM, new ServerOptimizer.Sgd(1f),
                RowInitializer.constant(0f))));
        long id = 0;
        while (KeyHash.serverOf(id, 3) == 1) {
            id++;
        }
        long foreign = id;
        TableException e = assertThrows(TableException.class, () -> s.pullSparse("emb", Rows.ids(foreign), 1, Rows.zeros(DIM)));
        assertTrue(e.getMessage().contains("id " + foreign + " belongs to server " + KeyHash.serverOf(foreign, 3)), e.getMessage());
        assertEquals(0, s.sparseTable("emb").keys(), "nothing was created");
    }

    private static TableShard sLike(TableShard s) {
        return new TableShard(0, 1, List.of(), List.of(new SparseTableConfig("clicks", DIM, new ServerOptimizer.Sgd(1f),
                RowInitializer.constant(0f))));
    }
}
