package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which ids get a row, on scripted streams of pulls and pushes: the exact set each filter admits, and when. */
class RowAdmissionTest {
    private static final int DIM = 4;
    private static final RowInitializer INIT = RowInitializer.uniform(-1f, 1f, 7);

    @TempDir
    Path dir;

    private static TableShard shard(RowAdmission admission) {
        SparseTableConfig emb = new SparseTableConfig("emb", DIM, new ServerOptimizer.Sgd(1f), INIT)
                .withRows(admission, RowEviction.none());
        return new TableShard(0, 1, List.of(), List.of(emb));
    }

    private static float[] pull(TableShard s, long id) {
        MemorySegment out = Rows.zeros(DIM);
        s.pullSparse("emb", Rows.ids(id), 1, out);
        return Rows.toArray(out);
    }

    private static void push(TableShard s, long id, float g) {
        s.pushSparse("emb", Rows.ids(id), 1, Rows.floats(g, g, g, g));
    }

    private static float[] initial(long id) {
        float[] row = new float[DIM];
        for (int j = 0; j < DIM; j++) {
            row[j] = INIT.value(id, j);
        }
        return row;
    }

    /** The ids of {@code candidates} that hold a row. */
    private static Set<Long> admitted(TableShard s, List<Long> candidates) {
        Set<Long> out = new TreeSet<>();
        for (long id : candidates) {
            if (s.sparseTable("emb").peekRecord(id) != null) {
                out.add(id);
            }
        }
        return out;
    }

    /** Each step pulls the step's ids, then pushes a gradient of 1 for each, as a worker does. */
    private static void steps(TableShard s, long[][] stream) {
        for (long[] step : stream) {
            for (long id : step) {
                pull(s, id);
            }
            for (long id : step) {
                push(s, id, 1f);
            }
        }
    }

    @Test
    void aCounterFilterAdmitsAnIdAtItsNthSightingAndDropsItsGradientsBefore() {
        TableShard s = shard(new RowAdmission.Counter(3));
        // id 1 seen at steps 0, 1, 2 (admitted at 2); id 2 at 0, 3, 4 (admitted at 4); id 3 twice; id 4 once
        steps(s, new long[][]{{1, 2, 3}, {1, 3}, {1, 4}, {2}, {2}});
        SparseTable t = s.sparseTable("emb");
        assertEquals(Set.of(1L, 2L), admitted(s, List.of(1L, 2L, 3L, 4L)));
        assertEquals(2, t.keys());
        assertEquals(2, t.pending(), "ids 3 and 4 are still counted");
        // each admitted row got exactly the gradient of its admitting step and none of the dropped ones before
        float[] one = t.peekRecord(1);
        float[] two = t.peekRecord(2);
        for (int j = 0; j < DIM; j++) {
            assertEquals(INIT.value(1, j) - 1f, one[j], "id 1, column " + j);
            assertEquals(INIT.value(2, j) - 1f, two[j], "id 2, column " + j);
        }
        assertArrayEquals(initial(4), pull(s, 4), "an id not admitted reads the initializer's row");
        assertNull(t.peekRecord(4), "its second sighting does not admit it");
        assertArrayEquals(initial(3), pull(s, 3));
        assertArrayEquals(initial(3), t.peekRecord(3), "id 3's third sighting admits it, with the row it was shown");
    }

    @Test
    void aCountingBloomFilterLargeEnoughAdmitsExactlyAsTheCounterFilter() {
        long[][] stream = stream(400, 11);
        TableShard counter = shard(new RowAdmission.Counter(2));
        TableShard bloom = shard(new RowAdmission.CountingBloom(2, 100_000, 0.001));
        steps(counter, stream);
        steps(bloom, stream);
        List<Long> ids = ids(stream);
        Set<Long> byCounter = admitted(counter, ids);
        assertTrue(byCounter.size() > 50 && byCounter.size() < ids.size(), byCounter.size() + " of " + ids.size());
        assertEquals(byCounter, admitted(bloom, ids));
        assertEquals(0, bloom.sparseTable("emb").pending(), "the Bloom filter keeps nothing per id");
    }

    @Test
    void aSmallCountingBloomFilterAdmitsEarlyButNeverLateAndKeepsItsMemory() {
        long[][] stream = stream(2000, 5);
        List<Long> ids = ids(stream);
        TableShard counter = shard(new RowAdmission.Counter(3));
        steps(counter, stream);
        RowAdmission.CountingBloom tiny = new RowAdmission.CountingBloom(3, 64, 0.1);
        TableShard bloom = shard(tiny);
        long emptyBytes = bloom.sparseTable("emb").bytes();
        steps(bloom, stream);
        Set<Long> exact = admitted(counter, ids);
        Set<Long> approximate = admitted(bloom, ids);
        assertTrue(approximate.containsAll(exact), "every id the exact count admits, the filter admits");
        assertTrue(approximate.size() > exact.size(), "with 64 ids' counters for " + ids.size() + " ids, false positives");
        long rowBytes = bloom.sparseTable("emb").bytes() - emptyBytes;
        long filterBytes = tiny.counters(1);
        assertTrue(filterBytes < 1024, filterBytes + " bytes of counters");
        assertTrue(rowBytes > 0 && bloom.sparseTable("emb").pending() == 0, "rows grow, the filter does not");
    }

    @Test
    void aProbabilityFilterAdmitsTheSameIdsOnTheSameStreamAndAboutItsShare() {
        long[][] stream = stream(3000, 3);
        List<Long> ids = ids(stream);
        TableShard a = shard(new RowAdmission.Probability(0.25));
        TableShard b = shard(new RowAdmission.Probability(0.25));
        steps(a, stream);
        steps(b, stream);
        Set<Long> admitted = admitted(a, ids);
        assertEquals(admitted, admitted(b, ids));
        // one sighting each for most ids of the stream: about a quarter of those get in
        long once = ids.stream().filter(id -> sightings(stream, id) == 1).count();
        long onceIn = ids.stream().filter(id -> sightings(stream, id) == 1 && admitted.contains(id)).count();
        assertTrue(onceIn > 0.18 * once && onceIn < 0.32 * once, onceIn + " of " + once + " ids seen once");
    }

    @Test
    void theFilterStateIsSavedAndRestoredWithTheTable() {
        TableShard s = shard(new RowAdmission.Counter(3));
        steps(s, new long[][]{{5, 6}, {5}});
        s.save(dir, SaveIdentity.fresh("test", 0, 2));
        TableShard loaded = shard(new RowAdmission.Counter(3));
        loaded.load(dir);
        assertEquals(2, loaded.sparseTable("emb").pending());
        pull(loaded, 5);
        pull(loaded, 6);
        assertEquals(Set.of(5L), admitted(loaded, List.of(5L, 6L)), "id 5 had two sightings before the save");

        RowAdmission.CountingBloom cbf = new RowAdmission.CountingBloom(2, 1000, 0.01);
        TableShard b = shard(cbf);
        steps(b, new long[][]{{7}});
        Path bloomDir = dir.resolve("bloom");
        b.save(bloomDir, SaveIdentity.fresh("test", 0, 1));
        TableShard restored = shard(cbf);
        restored.load(bloomDir);
        TableShard fresh = shard(cbf);
        pull(restored, 7);
        pull(fresh, 7);
        assertNotNull(restored.sparseTable("emb").peekRecord(7), "the restored counters hold id 7's first sighting");
        assertNull(fresh.sparseTable("emb").peekRecord(7), "without them it is a first sighting");
    }

    /** {@code steps} steps of 8 ids each from a Zipf-like law over 10,000 ids: a few common, most rare. */
    private static long[][] stream(int steps, long seed) {
        java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
        long[][] out = new long[steps][];
        for (int i = 0; i < steps; i++) {
            Set<Long> step = new TreeSet<>();
            while (step.size() < 8) {
                step.add((long) Math.floor(Math.pow(10_000, r.nextDouble())));
            }
            out[i] = step.stream().mapToLong(Long::longValue).toArray();
        }
        return out;
    }

    private static List<Long> ids(long[][] stream) {
        Set<Long> all = new TreeSet<>();
        for (long[] step : stream) {
            for (long id : step) {
                all.add(id);
            }
        }
        return new ArrayList<>(all);
    }

    private static int sightings(long[][] stream, long id) {
        int n = 0;
        for (long[] step : stream) {
            for (long x : step) {
                n += x == id ? 1 : 0;
            }
        }
        return n;
    }
}
