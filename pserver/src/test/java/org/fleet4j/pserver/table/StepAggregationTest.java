package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Sync mode on one server: two workers' pushes of a step become one Adagrad update with their average gradient
 * (Adagrad is not linear, so applying the pushes one by one gives other values), and nothing changes before the last
 * worker's push.
 */
class StepAggregationTest {
    private static final ServerOptimizer ADAGRAD = new ServerOptimizer.Adagrad(0.5f, 1e-6f);

    private static TableShard shard() {
        return new TableShard(0, 1,
                List.of(new DenseTableConfig("w", new long[]{3}, ADAGRAD, RowInitializer.constant(1f))),
                List.of(new SparseTableConfig("emb", 2, ADAGRAD, RowInitializer.constant(0.5f))));
    }

    @Test
    void denseBlockAppliesTheAverageOnceAllWorkersPushed() {
        TableShard sync = shard();
        sync.aggregateSteps(2);
        TableShard reference = shard();
        sync.pushDense("w", 0, Rows.floats(1f, 2f, -3f));
        assertArrayEquals(new float[]{1f, 1f, 1f}, pull(sync), "no update before the second worker's push");
        sync.pushDense("w", 0, Rows.floats(3f, 0f, 1f));
        reference.pushDense("w", 0, Rows.floats(2f, 1f, -1f));
        assertArrayEquals(pull(reference), pull(sync));
        // the next step starts from an empty sum
        sync.pushDense("w", 0, Rows.floats(1f, 1f, 1f));
        sync.pushDense("w", 0, Rows.floats(1f, 1f, 1f));
        reference.pushDense("w", 0, Rows.floats(1f, 1f, 1f));
        assertArrayEquals(pull(reference), pull(sync));
    }

    @Test
    void sparseRowsGetTheAverageOfEveryWorkersGradientIncludingAnEmptyPush() {
        TableShard sync = shard();
        sync.aggregateSteps(2);
        TableShard reference = shard();
        sync.pullSparse("emb", Rows.ids(7, 9), 2, Rows.zeros(4));
        reference.pullSparse("emb", Rows.ids(7, 9), 2, Rows.zeros(4));
        sync.pushSparse("emb", Rows.ids(7, 9), 2, Rows.floats(1f, 1f, 4f, -2f));
        sync.pushSparse("emb", Rows.ids(9), 1, Rows.floats(2f, 2f));
        reference.pushSparse("emb", Rows.ids(7, 9), 2, Rows.floats(0.5f, 0.5f, 3f, 0f));
        assertArrayEquals(rows(reference), rows(sync));

        sync.pushSparse("emb", Rows.ids(), 0, Rows.zeros(0));
        sync.pushSparse("emb", Rows.ids(7), 1, Rows.floats(2f, 4f));
        reference.pushSparse("emb", Rows.ids(7), 1, Rows.floats(1f, 2f));
        assertArrayEquals(rows(reference), rows(sync));
    }

    private static float[] pull(TableShard shard) {
        var out = Rows.zeros(3);
        shard.pullDense("w", 0, out);
        return Rows.toArray(out);
    }

    private static float[] rows(TableShard shard) {
        var out = Rows.zeros(4);
        shard.pullSparse("emb", Rows.ids(7, 9), 2, out);
        return Rows.toArray(out);
    }
}
