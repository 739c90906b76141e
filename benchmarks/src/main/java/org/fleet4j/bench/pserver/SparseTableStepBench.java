package org.fleet4j.bench.pserver;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Executor;
import org.fleet4j.pserver.table.RowInitializer;
import org.fleet4j.pserver.table.ServerOptimizer;
import org.fleet4j.pserver.table.SparseTable;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;

/**
 * A server table's share of a {@code ps_perf} step, without any transport: a 1M x 16 SGD table with every row
 * created, then steps of one pull and one push of a batch's unique ids (4,096 Zipf(1.1) draws, ~1,750 unique), on one
 * owner that is the calling thread itself (as a grpc++ network thread is), so nothing but the table is timed. Prints
 * ns per key (a pull and a push) for each round after the first, for the Zipf batches (mostly cache misses on a 64 MB
 * table), for batches of a few thousand hot ids (all in cache), and for the Zipf batches with each push given its
 * pull's lookup (as star_server and grpc++ connections do), and their medians.
 *
 * <pre>java -cp 'build/bench/*' org.fleet4j.bench.pserver.SparseTableStepBench [rounds] [steps per round]</pre>
 */
public final class SparseTableStepBench {
    private static final int IDS = 1_000_000;
    private static final int DIM = 16;
    private static final int BATCH = 4096;
    private static final int BATCHES = 64;

    private SparseTableStepBench() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int steps = args.length > 1 ? Integer.parseInt(args[1]) : 4000;
        SplittableRandom rnd = new SplittableRandom(1);
        List<long[]> zipf = batches(zipfCdf(), rnd);
        List<long[]> hot = new ArrayList<>();
        for (int b = 0; b < BATCHES; b++) {
            hot.add(rnd.longs(BATCH, 0, 4L * BATCH).distinct().toArray());
        }
        TableShard shard = new TableShard(0, 1, List.of(), List.of(new SparseTableConfig("emb", DIM,
                new ServerOptimizer.Sgd(0.01f), RowInitializer.constant(0f), 16)));
        shard.runOn(List.<Executor>of(Runnable::run));
        MemorySegment chunk = Arena.global().allocate(8L * 65536, 64);
        MemorySegment rows = Arena.global().allocate(4L * DIM * 65536, 64);
        for (long id = 0; id < IDS; id += 65536) {
            int n = (int) Math.min(65536, IDS - id);
            for (int i = 0; i < n; i++) {
                chunk.setAtIndex(ValueLayout.JAVA_LONG, i, id + i);
            }
            shard.pullSparse("emb", chunk, n, rows);
        }
        MemorySegment grads = Arena.global().allocate(4L * DIM * BATCH, 64);
        for (int i = 0; i < DIM * BATCH; i++) {
            grads.setAtIndex(ValueLayout.JAVA_FLOAT, i, 1e-4f);
        }
        System.out.printf(Locale.ROOT, "sparse table step: %,d x %d SGD rows, batches of %,d Zipf(1.1) draws (%.0f unique"
                + " on average) and of %.0f hot ids; one owner, the calling thread; %d steps a round%n", IDS, DIM, BATCH,
                zipf.stream().mapToInt(b -> b.length).average().orElse(0),
                hot.stream().mapToInt(b -> b.length).average().orElse(0), steps);
        double[] zipfNs = new double[rounds - 1];
        double[] hotNs = new double[rounds - 1];
        double[] keptNs = new double[rounds - 1];
        for (int r = 0; r < rounds; r++) {
            double z = round(shard, zipf, steps, chunk, rows, grads, false);
            double h = round(shard, hot, steps, chunk, rows, grads, false);
            double k = round(shard, zipf, steps, chunk, rows, grads, true);
            if (r > 0) {
                zipfNs[r - 1] = z;
                hotNs[r - 1] = h;
                keptNs[r - 1] = k;
                System.out.printf(Locale.ROOT, "  round %d: Zipf %.1f ns/key, hot %.1f ns/key, Zipf with the push reusing"
                        + " its pull's lookup %.1f ns/key (a pull and a push)%n", r, z, h, k);
            }
        }
        System.out.printf(Locale.ROOT, "median: Zipf %.1f ns/key, hot %.1f ns/key, Zipf reusing the lookup %.1f ns/key%n",
                median(zipfNs), median(hotNs), median(keptNs));
    }

    /**
     * Steps of a pull and a push of each batch; with {@code keep}, the push is given the pull's lookup, as a
     * star_server or grpc++ connection does, so it skips finding the rows again.
     */
    private static double round(TableShard shard, List<long[]> batches, int steps, MemorySegment ids,
                                MemorySegment rows, MemorySegment grads, boolean keep) {
        long keys = 0;
        long t0 = System.nanoTime();
        for (int s = 0; s < steps; s++) {
            long[] b = batches.get(s % batches.size());
            MemorySegment.copy(b, 0, ids, ValueLayout.JAVA_LONG, 0, b.length);
            if (keep) {
                SparseTable.Lookup[] pulled = new SparseTable.Lookup[1];
                shard.pullSparseAsync("emb", ids, b.length, rows, l -> pulled[0] = l).join();
                shard.pushSparseAsync("emb", ids, b.length, grads, pulled[0]).join();
            } else {
                shard.pullSparse("emb", ids, b.length, rows);
                shard.pushSparse("emb", ids, b.length, grads);
            }
            keys += b.length;
        }
        return (System.nanoTime() - t0) / (double) keys;
    }

    private static double[] zipfCdf() {
        double[] cdf = new double[IDS];
        double total = 0;
        for (int r = 0; r < IDS; r++) {
            total += Math.pow(r + 1, -1.1);
            cdf[r] = total;
        }
        for (int r = 0; r < IDS; r++) {
            cdf[r] /= total;
        }
        return cdf;
    }

    private static List<long[]> batches(double[] cdf, SplittableRandom rnd) {
        List<long[]> out = new ArrayList<>();
        for (int b = 0; b < BATCHES; b++) {
            long[] drawn = new long[BATCH];
            for (int i = 0; i < BATCH; i++) {
                int r = Arrays.binarySearch(cdf, rnd.nextDouble());
                drawn[i] = Math.min(r < 0 ? -r - 1 : r, IDS - 1);
            }
            out.add(Arrays.stream(drawn).distinct().toArray());
        }
        return out;
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
