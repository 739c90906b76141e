package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The memory target at test scale: 1M keys of dimension 16 with Adagrad in at most 1.5 x the raw bytes (an 8-byte
 * key, 16 value floats, 16 accumulator floats). The 10M-key figure is SparseTableMemoryBench's, in PERFORMANCE.md.
 */
class SparseTableMemoryTest {
    @Test
    void aMillionAdagradRowsOfDimension16FitInOneAndAHalfTimesTheirRawBytes() {
        int keys = 1_000_000;
        int dim = 16;
        SparseTable table = new SparseTable(new SparseTableConfig("emb", dim, new ServerOptimizer.Adagrad(0.1f),
                RowInitializer.uniform(-0.01f, 0.01f, 1)));
        int batch = 4096;
        MemorySegment ids = Rows.zeros(batch * 2L);
        MemorySegment out = Rows.zeros((long) batch * dim);
        for (int from = 0; from < keys; from += batch) {
            int n = Math.min(batch, keys - from);
            for (int i = 0; i < n; i++) {
                ids.setAtIndex(ValueLayout.JAVA_LONG, i, (from + i) * 31L);
            }
            table.pull(ids, n, out);
        }
        assertEquals(keys, table.keys());
        long raw = keys * (8L + 2L * dim * Float.BYTES);
        double ratio = (double) table.bytes() / raw;
        assertTrue(ratio <= 1.5, "the table holds " + table.bytes() + " bytes, " + ratio + " x the raw " + raw);
        assertTrue(ratio >= 1.0, "the count covers at least the rows and keys: " + ratio);
    }

    @Test
    void theByteCountIsWhatTheStripesAllocated() {
        TableShard shard = new TableShard(0, 1, List.of(), List.of(new SparseTableConfig("emb", 16,
                new ServerOptimizer.Adagrad(0.1f), RowInitializer.constant(0f), 1)));
        shard.pullSparse("emb", Rows.ids(1), 1, Rows.zeros(16));
        // one stripe per owner (1 configured is fewer than the owners): each an index of 16 entries of 12 bytes; the
        // row's stripe also a first chunk of 64 rows, each 32 floats and the row's 8-byte id (no eviction stats: the
        // table evicts nothing)
        assertEquals(shard.owners() * 16 * 12 + 64 * (32 * 4 + 8), shard.sparseTable("emb").bytes());
    }
}
