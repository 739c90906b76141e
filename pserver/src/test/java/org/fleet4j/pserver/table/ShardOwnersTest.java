package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A transport's executors as a shard's owners ({@link TableShard#runOn}): the split follows {@link KeyHash} for any
 * number of owners (what grpc++'s workers route by), rows move with it, and work asked for on an owner's own thread
 * runs there in place, with no task handed to any executor.
 */
class ShardOwnersTest {
    private static final int DIM = 4;
    private static final long[] IDS = {0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 1L << 40, -1, -77, 123456789};

    @Test
    void theSplitIsKeyHashsForAnyNumberOfOwnersAndRowsMoveWithIt() {
        TableShard shard = shard();
        float[] grads = new float[IDS.length * DIM];
        for (int i = 0; i < grads.length; i++) {
            grads[i] = i % 7 - 3;
        }
        shard.pushSparse("emb", Rows.ids(IDS), IDS.length, Rows.floats(grads));
        float[] before = pull(shard);
        for (int owners = 1; owners <= 8; owners++) {
            List<ExecutorService> executors = executors(owners);
            try {
                shard.runOn(executors);
                assertEquals(owners, shard.owners());
                for (long id : IDS) {
                    assertEquals(KeyHash.threadOf(id, owners), shard.ownerOfSparse("emb", id), "id " + id + " of "
                            + owners + " owners");
                }
                assertEquals(KeyHash.ownerOfBlock("bias", 0, owners), shard.ownerOfDense("bias", 0));
                assertEquals(KeyHash.ownerOfSteps("emb", owners), shard.ownerOfSparseSteps("emb"));
                assertArrayEquals(before, pull(shard), "rows after the split over " + owners + " owners");
                assertEquals(IDS.length, shard.stats().get(1).keys(), "no row lost or doubled");
            } finally {
                shard.runOnOwnThreads();
                executors.forEach(ExecutorService::shutdownNow);
            }
            assertArrayEquals(before, pull(shard), "rows back on the shard's own threads");
        }
    }

    @Test
    void workOnTheOwnersOwnThreadRunsInPlace() throws Exception {
        TableShard shard = shard();
        int owners = 3;
        List<ExecutorService> threads = executors(owners);
        AtomicInteger handedOff = new AtomicInteger();
        List<Executor> counted = new ArrayList<>();
        for (ExecutorService t : threads) {
            counted.add(task -> {
                handedOff.incrementAndGet();
                t.execute(task);
            });
        }
        try {
            shard.runOn(counted);
            handedOff.set(0);
            for (int owner = 0; owner < owners; owner++) {
                int me = owner;
                long[] mine = Arrays.stream(IDS).filter(id -> KeyHash.threadOf(id, owners) == me).toArray();
                float[] rows = threads.get(owner).submit(() -> {
                    try (Arena confined = Arena.ofConfined()) {
                        MemorySegment ids = confined.allocate((long) mine.length * Long.BYTES);
                        MemorySegment.copy(mine, 0, ids, ValueLayout.JAVA_LONG, 0, mine.length);
                        MemorySegment grads = confined.allocate((long) mine.length * DIM * Float.BYTES);
                        grads.fill((byte) 0);
                        shard.pushSparse("emb", ids, mine.length, grads);
                        MemorySegment out = confined.allocate((long) mine.length * DIM * Float.BYTES);
                        shard.pullSparse("emb", ids, mine.length, out);
                        MemorySegment bias = confined.allocate(8L * Float.BYTES);
                        if (shard.ownerOfDense("bias", 0) == me) {
                            shard.pullDense("bias", 0, bias);
                        }
                        return out.toArray(ValueLayout.JAVA_FLOAT);
                    }
                }).get(30, TimeUnit.SECONDS);
                assertEquals(mine.length * DIM, rows.length);
            }
            assertEquals(0, handedOff.get(), "tasks handed to an owner's executor by its own thread");
            shard.pullSparse("emb", Rows.ids(IDS), IDS.length, Rows.zeros((long) IDS.length * DIM));
            assertTrue(handedOff.get() > 0, "a caller on another thread hands its parts to the owners");
        } finally {
            shard.runOnOwnThreads();
            threads.forEach(ExecutorService::shutdownNow);
        }
    }

    /**
     * A request that an owner's thread splits over owners hands the other owners their parts before it runs its own
     * in place, so that the parts run at the same time (before, its own part ran first and the others' only after it,
     * one after the other). Seen from the other owner's executor: when it is handed its part, this thread's row has
     * not been updated yet. Fails with the old order (the row already pushed, -0.5).
     */
    @Test
    void anOwnersThreadQueuesTheOtherOwnersPartsBeforeItRunsItsOwn() throws Exception {
        TableShard shard = shard();
        int owners = 2;
        long mine = Arrays.stream(IDS).filter(id -> KeyHash.threadOf(id, owners) == 0).findFirst().orElseThrow();
        long theirs = Arrays.stream(IDS).filter(id -> KeyHash.threadOf(id, owners) == 1).findFirst().orElseThrow();
        List<ExecutorService> threads = executors(owners);
        AtomicBoolean watching = new AtomicBoolean();
        List<Float> mineWhenQueued = new CopyOnWriteArrayList<>();
        Executor other = task -> {
            if (watching.get()) {
                // on owner 0's thread (the one handing the part over), so the peek runs there in place
                mineWhenQueued.add(shard.sparseTable("emb").peekRecord(mine)[0]);
            }
            threads.get(1).execute(task);
        };
        try {
            shard.runOn(List.of(threads.get(0), other));
            shard.pullSparse("emb", Rows.ids(mine, theirs), 2, Rows.zeros(2L * DIM));
            watching.set(true);
            float[] rows = threads.get(0).submit(() -> {
                shard.pushSparse("emb", Rows.ids(mine, theirs), 2, Rows.floats(1, 1, 1, 1, 1, 1, 1, 1));
                MemorySegment out = Rows.zeros(2L * DIM);
                shard.pullSparse("emb", Rows.ids(mine, theirs), 2, out);
                return Rows.toArray(out);
            }).get(30, TimeUnit.SECONDS);
            assertEquals(List.of(0.5f, -0.5f), mineWhenQueued, "owner 0's row when owner 1 was handed its part of the"
                    + " push (0.5: not pushed yet; -0.5: owner 0 had run its part first) and then of the pull (pushed)");
            assertArrayEquals(new float[]{-0.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f}, rows,
                    "both rows pushed once (0.5 - 1 x 1)");
        } finally {
            watching.set(false);
            shard.runOnOwnThreads();
            threads.forEach(ExecutorService::shutdownNow);
        }
    }

    private static TableShard shard() {
        return new TableShard(0, 1,
                List.of(new DenseTableConfig("bias", new long[]{8}, new ServerOptimizer.Sgd(1f),
                        RowInitializer.constant(0f))),
                List.of(new SparseTableConfig("emb", DIM, new ServerOptimizer.Sgd(1f), RowInitializer.constant(0.5f),
                        4)));
    }

    private static List<ExecutorService> executors(int count) {
        List<ExecutorService> all = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            all.add(Executors.newSingleThreadExecutor());
        }
        return all;
    }

    private static float[] pull(TableShard shard) {
        MemorySegment out = Rows.zeros((long) IDS.length * DIM);
        shard.pullSparse("emb", Rows.ids(IDS), IDS.length, out);
        return Rows.toArray(out);
    }
}
