package org.fleet4j.bench.pserver;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.pserver.table.RowInitializer;
import org.fleet4j.pserver.table.ServerOptimizer;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;

/**
 * A server table's push throughput on hot keys, as many request threads of a transport would drive it: each of T
 * threads pushes batches of B distinct ids drawn from H hot keys (dimension 16, Adagrad) straight into one
 * {@link TableShard} for S seconds; prints rows applied per second for T = 1, 2 and 8.
 *
 * <pre>java -cp 'build/bench/*' org.fleet4j.bench.pserver.TablePushThroughputBench [seconds] [hot keys] [batch]</pre>
 */
public final class TablePushThroughputBench {
    private static final int DIM = 16;

    private TablePushThroughputBench() {
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int hot = args.length > 1 ? Integer.parseInt(args[1]) : 1024;
        int batch = args.length > 2 ? Integer.parseInt(args[2]) : 256;
        System.out.printf(Locale.ROOT, "table push throughput: %d hot keys, batches of %d ids, dimension %d, Adagrad,"
                + " %.1f s per run, %d cores%n", hot, batch, DIM, seconds, Runtime.getRuntime().availableProcessors());
        run(2, seconds, hot, batch, false);
        for (int threads : new int[]{1, 2, 8}) {
            run(threads, seconds, hot, batch, true);
        }
        System.exit(0);
    }

    /** One run of {@code threads} threads on a fresh table; {@code report} false: a warm-up, for the JIT. */
    private static void run(int threads, double seconds, int hot, int batch, boolean report) throws Exception {
        TableShard shard = new TableShard(0, 1, List.of(), List.of(new SparseTableConfig("emb", DIM,
                new ServerOptimizer.Adagrad(0.05f), RowInitializer.constant(0f))));
        AtomicLong rows = new AtomicLong();
        CountDownLatch start = new CountDownLatch(1);
        long until = System.nanoTime() + (long) (seconds * 1e9);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int seed = t;
            workers.add(Thread.ofPlatform().start(() -> {
                SplittableRandom r = new SplittableRandom(seed);
                MemorySegment ids = Tensor.zeros(DType.I64, batch).segment();
                MemorySegment grads = Tensor.zeros((long) batch * DIM).segment();
                for (long i = 0; i < (long) batch * DIM; i++) {
                    grads.setAtIndex(ValueLayout.JAVA_FLOAT, i, 0.001f);
                }
                long done = 0;
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                while (System.nanoTime() < until) {
                    int first = r.nextInt(hot);
                    for (int i = 0; i < batch; i++) {
                        ids.setAtIndex(ValueLayout.JAVA_LONG, i, (first + i) % hot);
                    }
                    shard.pushSparse("emb", ids, Math.min(batch, hot), grads);
                    done += Math.min(batch, hot);
                }
                rows.addAndGet(done);
            }));
        }
        long t0 = System.nanoTime();
        start.countDown();
        for (Thread w : workers) {
            w.join();
        }
        double elapsed = (System.nanoTime() - t0) / 1e9;
        if (report) {
            System.out.printf(Locale.ROOT, "  %d thread(s): %,.0f rows/s%n", threads, rows.get() / elapsed);
        }
    }
}
