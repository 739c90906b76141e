package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which rows a shrink removes, on scripted streams: the exact set for each rule, and what it reports. */
class RowEvictionTest {
    private static final int DIM = 4;

    @TempDir
    Path dir;

    private static TableShard shard(RowEviction eviction, RowInitializer init) {
        SparseTableConfig emb = new SparseTableConfig("emb", DIM, new ServerOptimizer.Sgd(1f), init)
                .withRows(new RowAdmission.Everyone(), eviction);
        return new TableShard(0, 1, List.of(), List.of(emb));
    }

    private static RowEviction eviction(long stepsToLive, double l2, double deleteThreshold, int unseenDays) {
        return new RowEviction(stepsToLive, l2, deleteThreshold, unseenDays, RowEviction.DEFAULT_DECAY,
                RowEviction.DEFAULT_NONCLK_COEFF, RowEviction.DEFAULT_CLICK_COEFF, 0);
    }

    private static void pull(TableShard s, long... ids) {
        s.pullSparse("emb", Rows.ids(ids), ids.length, Rows.zeros((long) ids.length * DIM));
    }

    /** One step: a pull and one push of all the ids, each with gradient {@code g} in every column. */
    private static void step(TableShard s, float g, long... ids) {
        pull(s, ids);
        float[] grads = new float[ids.length * DIM];
        java.util.Arrays.fill(grads, g);
        s.pushSparse("emb", Rows.ids(ids), ids.length, Rows.floats(grads));
    }

    private static Set<Long> rows(TableShard s) {
        Set<Long> out = new TreeSet<>();
        s.sparseTable("emb").forEachRow((id, record) -> out.add(id));
        return out;
    }

    @Test
    void stepsToLiveEvictsTheRowsNotUpdatedForThatManySteps() {
        TableShard s = shard(eviction(3, 0, 0, 0), RowInitializer.constant(0.5f));
        step(s, 0.1f, 1, 2, 3);   // step 1
        step(s, 0.1f, 1);         // 2
        step(s, 0.1f, 1, 2);      // 3
        step(s, 0.1f, 1);         // 4
        step(s, 0.1f, 1);         // 5: id 2 last updated at 3, id 3 at 1
        assertEquals(5, s.sparseTable("emb").step());
        ShrinkCounts c = s.sparseTable("emb").shrink("test");
        assertEquals(Set.of(1L, 2L), rows(s), "5 - 1 > 3 steps: id 3 goes; id 2 (5 - 3) stays");
        assertEquals(new ShrinkCounts(3, 1, 0, 0, c.bytesBefore(), c.bytesAfter()), c);
        step(s, 0.1f, 1);
        step(s, 0.1f, 1);         // step 7: id 2 is 4 steps old
        s.sparseTable("emb").shrink("test");
        assertEquals(Set.of(1L), rows(s));
        assertEquals(2, s.sparseTable("emb").evictedRows());
    }

    @Test
    void l2EvictionRemovesTheRowsWithASmallNorm() {
        TableShard s = shard(eviction(0, 0.5, 0, 0), RowInitializer.constant(0f));
        step(s, 0.05f, 10);       // value -0.05 in 4 columns: norm 0.1
        step(s, 1f, 11);          // norm 2
        step(s, -0.2f, 12, 13);   // norm 0.4
        step(s, -0.3f, 13);       // id 13: 0.5 a column, norm 1
        ShrinkCounts c = s.sparseTable("emb").shrink("test");
        assertEquals(Set.of(11L, 13L), rows(s));
        assertEquals(2, c.byL2());
    }

    @Test
    void theShowClickScoreDecaysAndEvictsAsPaddlesShrink() {
        TableShard s = shard(eviction(0, 0, 0.8, 2), RowInitializer.constant(0.1f));
        for (int i = 0; i < 10; i++) {
            pull(s, 20);          // 10 shows: score 10 x 0.1 = 1.0, 0.98 after the first decay
        }
        for (int i = 0; i < 5; i++) {
            pull(s, 21);          // 5 shows: 0.49 after decay, below 0.8
        }
        for (int i = 0; i < 9; i++) {
            pull(s, 22);          // 9 shows: 0.88 after one decay, 0.86 after two, 0.85 after three
        }
        s.pushSparse("emb", Rows.ids(20), 1, Rows.floats(0, 0, 0, 0));
        ShrinkCounts first = s.sparseTable("emb").shrink("test");
        assertEquals(Set.of(20L, 22L), rows(s));
        assertEquals(1, first.byScore());
        s.sparseTable("emb").shrink("test");
        assertEquals(Set.of(20L, 22L), rows(s), "two shrinks without an update: not more than 2");
        s.pushSparse("emb", Rows.ids(20), 1, Rows.floats(0, 0, 0, 0));
        s.sparseTable("emb").shrink("test");
        assertEquals(Set.of(20L), rows(s), "id 22 was never updated: 3 shrinks unseen; id 20 was at the second");
    }

    @Test
    void aShrinkReportsTheBytesItFreesAndTheStatsCountThem() {
        TableShard s = shard(eviction(1, 0, 0, 0), RowInitializer.constant(0f));
        long[] many = new long[20_000];
        for (int i = 0; i < many.length; i++) {
            many[i] = i * 7919L;
        }
        step(s, 1f, many);
        step(s, 1f, 1, 2);
        step(s, 1f, 1, 2);
        long before = s.sparseTable("emb").bytes();
        ShrinkCounts c = s.sparseTable("emb").shrink("test");
        assertEquals(20_000, c.byAge(), "the 20,000 rows of step 1 are 2 steps old; ids 1 and 2 stay");
        assertEquals(Set.of(1L, 2L), rows(s));
        assertEquals(before, c.bytesBefore());
        assertEquals(s.sparseTable("emb").bytes(), c.bytesAfter());
        assertTrue(c.freedBytes() > 20_000L * DIM * Float.BYTES, c.freedBytes() + " bytes freed");
        TableStats stats = s.stats().getFirst();
        assertEquals(20_000, stats.evicted());
        assertEquals(c.freedBytes(), stats.freedBytes());
        assertEquals(2, stats.keys());
    }

    @Test
    void aShrinkEveryKStepsRunsOnItsOwn() throws Exception {
        SparseTableConfig emb = new SparseTableConfig("emb", DIM, new ServerOptimizer.Sgd(1f), RowInitializer.constant(0f))
                .withRows(new RowAdmission.Everyone(), RowEviction.stepsToLive(2).withShrinkEverySteps(4));
        TableShard s = new TableShard(0, 1, List.of(), List.of(emb));
        s.countStepsOver(2);   // two workers: a step is two pushes
        for (int i = 0; i < 3; i++) {
            step(s, 1f, 100 + i);
            step(s, 1f, 1);    // steps 1, 2, 3 (the second push of each)
        }
        assertEquals(0, s.sparseTable("emb").evictedRows(), "no shrink before step 4");
        step(s, 1f, 1);
        step(s, 1f, 1);        // step 4
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (s.sparseTable("emb").evictedRows() == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(2, s.sparseTable("emb").evictedRows(), "ids 100 and 101 (stamped at steps 0 and 1) are more than 2 steps old at step 4");
        assertEquals(Set.of(1L, 102L), rows(s));
    }

    @Test
    void aPushGivenItsPullsLookupAfterAShrinkMovedTheRowsUpdatesTheRightRows() {
        TableShard s = shard(eviction(1, 0, 0, 0), RowInitializer.constant(0f));
        step(s, 1f, 1, 2, 3, 4, 5, 6);
        step(s, 1f, 5, 6);
        step(s, 1f, 5, 6);                   // ids 1..4 are 2 steps old
        SparseTable t = s.sparseTable("emb");
        AtomicReference<SparseTable.Lookup> kept = new AtomicReference<>();
        MemorySegment ids = Rows.ids(6, 5);
        t.pullAsync(ids, 2, Rows.zeros(2 * DIM), kept::set).join();
        t.shrink("test");                    // rows 1..4 go, 5 and 6 move to rows 0 and 1
        t.pushAsync(ids, 2, Rows.floats(1, 1, 1, 1, 10, 10, 10, 10), kept.get()).join();
        assertArrayEquals(new float[]{-4, -4, -4, -4}, t.peekRecord(6), "3 steps of 1, then 1");
        assertArrayEquals(new float[]{-13, -13, -13, -13}, t.peekRecord(5), "3 steps of 1, then 10");
    }

    @Test
    void rowStatsAreSavedSoThatALoadedTableEvictsAsTheSavedOneWould() {
        RowEviction rules = eviction(2, 0, 0.15, 0);
        TableShard s = shard(rules, RowInitializer.constant(0f));
        step(s, 1f, 1, 2, 3);
        step(s, 1f, 1, 2);
        pull(s, 2, 2);
        step(s, 1f, 1);
        step(s, 1f, 1);   // step 4: id 3 (step 1) is too old; id 2 has 4 shows, id 1 has 4 too
        s.save(dir, SaveIdentity.fresh("test", 0, 4));
        TableShard loaded = shard(rules, RowInitializer.constant(0f));
        loaded.load(dir);
        assertEquals(4, loaded.sparseTable("emb").step(), "the table's step comes back with it");
        assertEquals(rows(s), rows(loaded));
        step(s, 1f, 1);
        step(loaded, 1f, 1);
        s.sparseTable("emb").shrink("test");
        loaded.sparseTable("emb").shrink("test");
        assertEquals(Set.of(1L), rows(s), "id 2: 3 steps old; id 3 went at the save's shrink");
        assertEquals(rows(s), rows(loaded));
    }
}
