package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Many threads pushing to a few hot keys and one dense block. SGD with lr = 1 and small integer gradients keeps
 * every sum exact in float, so a lost update shows as a wrong total; every element of a pushed row gets the same
 * gradient, so a torn read shows as a row whose elements differ. The tables hold no lock: each stripe and block has
 * one owner that alone touches it. Run on owners that are not single writers (each task on its caller's thread),
 * this test loses updates and reads torn rows.
 */
class ConcurrentPushTest {
    private static final int DIM = 8;
    private static final int THREADS = 8;
    private static final int PUSHES = 3000;
    private static final long[] HOT = {0, 1, 2, 3, 1L << 33, -7};

    @Test
    void noUpdateIsLostOrTornUnderConcurrentPushes() throws Exception {
        hammer(shard());
    }

    /**
     * The same on a transport's executors as owners ({@link TableShard#runOn}), one thread each: three, so the
     * stripes are split anew over a count that is not a power of two.
     */
    @Test
    void noUpdateIsLostOrTornOnATransportsOwnExecutors() throws Exception {
        TableShard shard = shard();
        List<ExecutorService> loops = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            loops.add(Executors.newSingleThreadExecutor());
        }
        shard.runOn(loops);
        try {
            hammer(shard);
        } finally {
            loops.forEach(ExecutorService::shutdownNow);
        }
    }

    private static TableShard shard() {
        DenseTableConfig dense = new DenseTableConfig("bias", new long[]{64}, new ServerOptimizer.Sgd(1f), RowInitializer.constant(0f));
        return new TableShard(0, 1, List.of(dense),
                List.of(new SparseTableConfig("emb", DIM, new ServerOptimizer.Sgd(1f), RowInitializer.constant(0f), 2)));
    }

    private static void hammer(TableShard shard) throws Exception {
        long[][] expected = new long[THREADS][HOT.length];
        AtomicLong denseExpected = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int me = t;
            work.add(pool.submit(() -> {
                Random r = new Random(me);
                MemorySegment ids = Rows.zeros(HOT.length * 2L);
                MemorySegment grads = Rows.zeros((long) HOT.length * DIM);
                MemorySegment denseGrad = Rows.zeros(64);
                start.await();
                for (int p = 0; p < PUSHES; p++) {
                    int n = HotKeyPushes.next(r, HOT, DIM, ids, grads, expected[me]);
                    shard.pushSparse("emb", ids, n, grads);
                    int dg = 1 + r.nextInt(2);
                    denseGrad.fill((byte) 0);
                    for (int j = 0; j < 64; j++) {
                        denseGrad.setAtIndex(ValueLayout.JAVA_FLOAT, j, dg);
                    }
                    shard.pushDense("bias", 0, denseGrad);
                    denseExpected.addAndGet(dg);
                }
                return null;
            }));
        }
        Future<Integer> reader = pool.submit(() -> {
            MemorySegment ids = Rows.ids(HOT);
            MemorySegment out = Rows.zeros((long) HOT.length * DIM);
            MemorySegment denseOut = Rows.zeros(64);
            start.await();
            int reads = 0;
            do {
                shard.pullSparse("emb", ids, HOT.length, out);
                assertUniformRows(Rows.toArray(out), HOT.length, DIM);
                shard.pullDense("bias", 0, denseOut);
                assertUniformRows(Rows.toArray(denseOut), 1, 64);
                reads++;
            } while (!work.stream().allMatch(Future::isDone));
            return reads;
        });
        start.countDown();
        for (Future<?> f : work) {
            f.get(60, TimeUnit.SECONDS);
        }
        assertTrue(reader.get(60, TimeUnit.SECONDS) > 0);
        pool.shutdown();
        for (int k = 0; k < HOT.length; k++) {
            long total = 0;
            for (long[] perThread : expected) {
                total += perThread[k];
            }
            float[] rec = shard.sparseTable("emb").peekRecord(HOT[k]);
            for (int j = 0; j < DIM; j++) {
                assertEquals(-total, rec[j], "id " + HOT[k] + " element " + j + ": every pushed gradient counted once");
            }
        }
        MemorySegment bias = Rows.zeros(64);
        shard.pullDense("bias", 0, bias);
        assertEquals(-denseExpected.get(), Rows.toArray(bias)[63]);
    }

    private static void assertUniformRows(float[] rows, int n, int width) {
        for (int i = 0; i < n; i++) {
            for (int j = 1; j < width; j++) {
                assertEquals(rows[i * width], rows[i * width + j], "row " + i + " read half-updated");
            }
        }
    }
}
