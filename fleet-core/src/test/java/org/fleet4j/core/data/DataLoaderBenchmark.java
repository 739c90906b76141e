package org.fleet4j.core.data;

import org.fleet4j.core.tensor.Tensor;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Times loading the bundled MNIST and one epoch of batching it, beside a plain sequential copy of the same bytes
 * (the floor for any gather). Not a unit test: run by hand, see docs/performance/data.md.
 */
public final class DataLoaderBenchmark {
    private static final int LOAD_REPEATS = 9;
    private static final int WARMUP = 10;
    private static final int REPEATS = 41;

    public static void main(String[] args) {
        long[] load = new long[LOAD_REPEATS];
        MnistDataset train = null;
        for (int i = 0; i < LOAD_REPEATS; i++) {
            long t0 = System.nanoTime();
            train = MnistDataset.bundled(MnistDataset.Split.TRAIN);
            load[i] = System.nanoTime() - t0;
        }
        System.out.printf("load bundled MNIST train (8000 digits, gzip IDX -> float32): median %.1f ms%n", median(load) / 1e6);

        long bytesPerEpoch = train.images().byteSize() + train.labels().byteSize();
        for (int batch : new int[]{64, 256}) {
            DataLoader shuffled = DataLoader.builder(train, batch).shuffle(1).dropLast(true).build();
            DataLoader sequential = DataLoader.builder(train, batch).dropLast(true).build();
            DataLoader shard = DataLoader.builder(train, batch).shuffle(1).dropLast(true).shard(0, 4).build();
            Tensor[] copyTargets = {Tensor.zeros(train.images().dtype(), batch, 784), Tensor.zeros(train.labels().dtype(), batch, 1)};
            long[] tShuffled = new long[REPEATS];
            long[] tSequential = new long[REPEATS];
            long[] tShard = new long[REPEATS];
            long[] tCopy = new long[REPEATS];
            for (int i = 0; i < WARMUP; i++) {
                timeEpoch(shuffled, i);
                timeEpoch(sequential, i);
                timeEpoch(shard, i);
                timeContiguousCopy(train, copyTargets, batch);
            }
            for (int i = 0; i < REPEATS; i++) {
                // Interleaved so that machine load affects all four alike.
                tShuffled[i] = timeEpoch(shuffled, i);
                tSequential[i] = timeEpoch(sequential, i);
                tShard[i] = timeEpoch(shard, i);
                tCopy[i] = timeContiguousCopy(train, copyTargets, batch);
            }
            double copy = median(tCopy);
            System.out.printf("batch %d: contiguous copy %.2f ms/epoch (%.2f GB/s); loader sequential %.2f ms (%.2fx copy);"
                            + " shuffled %.2f ms (%.2fx copy, %.0f samples/s); shuffled rank 0 of 4 %.2f ms%n",
                    batch, copy / 1e6, bytesPerEpoch / copy, median(tSequential) / 1e6, median(tSequential) / copy,
                    median(tShuffled) / 1e6, median(tShuffled) / copy, shuffled.stepsPerEpoch() * batch / (median(tShuffled) / 1e9),
                    median(tShard) / 1e6);
        }
    }

    private static long timeEpoch(DataLoader loader, long epoch) {
        long t0 = System.nanoTime();
        long checksum = 0;
        for (Batch b : loader.epoch(epoch)) {
            checksum += b.size();
        }
        if (checksum == 0) {
            throw new AssertionError("no rows");
        }
        return System.nanoTime() - t0;
    }

    /** Copies the whole dataset batch by batch with one contiguous copy per field, as if the data were pre-shuffled. */
    private static long timeContiguousCopy(Dataset data, Tensor[] targets, int batch) {
        long t0 = System.nanoTime();
        for (int start = 0; start + batch <= data.size(); start += batch) {
            for (int f = 0; f < targets.length; f++) {
                Tensor src = data.fields().get(f);
                long rowBytes = src.byteSize() / data.size();
                MemorySegment.copy(src.segment(), start * rowBytes, targets[f].segment(), 0, batch * rowBytes);
            }
        }
        return System.nanoTime() - t0;
    }

    static double median(long[] values) {
        long[] s = values.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
    }
}
