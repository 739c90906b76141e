package org.fleet4j.fleet;

import java.util.Map;
import java.util.SplittableRandom;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/** The probes' data: this rank's rows of a seeded 16-sample batch of 10 features and 4 classes. */
final class SeededShards {
    private SeededShards() {
    }

    static Map<String, Tensor> shard(long seed, int rank, int world) {
        SplittableRandom r = new SplittableRandom(seed);
        Tensor x = Tensor.zeros(16, 10);
        Tensor y = Tensor.zeros(DType.I64, 16, 1);
        for (long i = 0; i < x.numel(); i++) {
            x.setFloat(i, (float) r.nextDouble(-1, 1));
        }
        for (long i = 0; i < 16; i++) {
            y.setLong(i, r.nextInt(4));
        }
        long rows = 16 / world;
        return Map.of("x", x.rows(rank * rows, (rank + 1) * rows), "y", y.rows(rank * rows, (rank + 1) * rows));
    }
}
