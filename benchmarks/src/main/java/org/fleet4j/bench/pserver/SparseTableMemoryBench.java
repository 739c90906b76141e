package org.fleet4j.bench.pserver;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.pserver.table.RowInitializer;
import org.fleet4j.pserver.table.ServerOptimizer;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;

/**
 * Sparse-table memory against the issue's target: N keys (default 10M) of dimension D (16) with Adagrad, created
 * by pulls of 4096 ids, in at most 1.5 x the raw bytes (8-byte key + D value floats + D accumulator floats).
 * Prints the table's own count of the off-heap bytes it holds and the JVM's direct memory in use after a GC (which
 * also frees the indexes left behind when a stripe doubled).
 *
 * <pre>java -XX:MaxDirectMemorySize=4g -cp 'build/bench/*' org.fleet4j.bench.pserver.SparseTableMemoryBench [keys] [dim]</pre>
 */
public final class SparseTableMemoryBench {
    private SparseTableMemoryBench() {
    }

    public static void main(String[] args) throws InterruptedException {
        long keys = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
        int dim = args.length > 1 ? Integer.parseInt(args[1]) : 16;
        int batch = 4096;
        System.gc();
        long before = OffHeapMemory.inUse();
        TableShard shard = new TableShard(0, 1, List.of(), List.of(new SparseTableConfig("emb", dim,
                new ServerOptimizer.Adagrad(0.05f), RowInitializer.uniform(-0.01f, 0.01f, 1))));
        MemorySegment ids = Tensor.zeros(DType.I64, batch).segment();
        MemorySegment out = Tensor.zeros((long) batch * dim).segment();
        long start = System.nanoTime();
        for (long from = 0; from < keys; from += batch) {
            int n = (int) Math.min(batch, keys - from);
            for (int i = 0; i < n; i++) {
                ids.setAtIndex(ValueLayout.JAVA_LONG, i, (from + i) * 0x9E3779B1L);
            }
            shard.pullSparse("emb", ids, n, out);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long held = shard.sparseTable("emb").bytes();
        System.gc();
        Thread.sleep(500);
        long inUse = OffHeapMemory.inUse() - before - ids.byteSize() - out.byteSize();
        long raw = keys * (8L + 2L * dim * Float.BYTES);
        System.out.printf("keys %,d  dim %d  adagrad%n", shard.sparseTable("emb").keys(), dim);
        System.out.printf("raw bytes (key + value + accumulator)  %,d  (%d per key)%n", raw, raw / keys);
        System.out.printf("table bytes (index + row chunks)       %,d  %.3f x raw  (%.1f per key)%n", held,
                (double) held / raw, (double) held / keys);
        System.out.printf("direct memory in use after GC          %,d  %.3f x raw%n", inUse, (double) inUse / raw);
        System.out.printf("created by pulls of %d ids: %.2f s, %.2f M keys/s%n", batch, seconds, keys / seconds / 1e6);
    }
}
