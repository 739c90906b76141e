package org.fleet4j.core.data;

import org.fleet4j.core.tensor.OffHeapMemoryException;
import org.fleet4j.core.tensor.Tensor;

import java.lang.foreign.MemorySegment;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Batches a {@link Dataset} for data-parallel training.
 *
 * <p>Each epoch orders the samples by a permutation that depends only on (seed, epoch) (or keeps dataset order
 * without shuffling) and cuts it into global batches of {@code globalBatch} consecutive samples. Every rank computes
 * the same order and takes its own slice of each global batch: of a global batch of b samples shared by N ranks,
 * rank r gets positions [r*(b/N) + min(r, b%N), ...) — the first b%N ranks one sample more than the others — so the
 * N ranks together see exactly the samples of that global batch. All ranks run {@link #stepsPerEpoch()} steps.
 * Without drop_last the final global batch may be short; a rank's share of it may then even be empty.
 *
 * <p>Rows are gathered into buffers allocated once, so stepping allocates nothing; a {@link Batch} is valid until
 * the iterator is advanced, and only one epoch can be iterated at a time.
 */
public final class DataLoader {
    private final Dataset dataset;
    private final List<Tensor> sources;
    private final long[] rowBytes;
    private final int globalBatch;
    private final int rank;
    private final int worldSize;
    private final boolean dropLast;
    private final boolean shuffle;
    private final long seed;
    private final int[] order;
    private final Batch fullBatch;
    private final Batch lastBatch;
    private final int steps;
    private long generation;

    private DataLoader(Builder b) {
        this.dataset = b.dataset;
        this.sources = dataset.fields();
        this.globalBatch = b.globalBatch;
        this.rank = b.rank;
        this.worldSize = b.worldSize;
        this.dropLast = b.dropLast;
        this.shuffle = b.shuffle;
        this.seed = b.seed;
        int n = dataset.size();
        this.steps = dropLast ? n / globalBatch : (n + globalBatch - 1) / globalBatch;
        this.order = new int[n];
        this.rowBytes = new long[sources.size()];
        Tensor[] buffers = new Tensor[sources.size()];
        int fullRows = shareSize(globalBatch);
        for (int f = 0; f < sources.size(); f++) {
            Tensor src = sources.get(f);
            long[] shape = src.shape();
            rowBytes[f] = n == 0 ? 0 : src.byteSize() / n;
            shape[0] = fullRows;
            try {
                buffers[f] = Tensor.zeros(src.dtype(), shape);
            } catch (OffHeapMemoryException e) {
                throw e.in("the batch buffer of field '" + dataset.fieldNames().get(f) + "' (" + fullRows + " rows)");
            }
        }
        this.fullBatch = new Batch(dataset.fieldNames(), buffers, order);
        int tail = n % globalBatch;
        this.lastBatch = dropLast || tail == 0 ? fullBatch : new Batch(dataset.fieldNames(), views(buffers, shareSize(tail)), order);
    }

    public static Builder builder(Dataset dataset, int globalBatch) {
        return new Builder(dataset, globalBatch);
    }

    private static Tensor[] views(Tensor[] buffers, int rows) {
        Tensor[] out = new Tensor[buffers.length];
        for (int f = 0; f < buffers.length; f++) {
            out[f] = buffers[f].rows(0, rows);
        }
        return out;
    }

    /** This rank's rows of a global batch of {@code b} samples. */
    private int shareSize(int b) {
        return b / worldSize + (rank < b % worldSize ? 1 : 0);
    }

    /** Where this rank's rows start within a global batch of {@code b} samples. */
    private int shareStart(int b) {
        return rank * (b / worldSize) + Math.min(rank, b % worldSize);
    }

    /** Steps per epoch; the same on every rank, since it depends only on the dataset size, global batch and drop_last. */
    public int stepsPerEpoch() {
        return steps;
    }

    /** Rows this rank gets in a full global batch. */
    public int localBatchSize() {
        return shareSize(globalBatch);
    }

    public int globalBatchSize() {
        return globalBatch;
    }

    public Dataset dataset() {
        return dataset;
    }

    /**
     * The batches of epoch {@code epoch}. Starting an iteration fixes the sample order of that epoch and invalidates
     * any iteration started before.
     */
    public Iterable<Batch> epoch(long epoch) {
        return () -> new EpochIterator(epoch);
    }

    private final class EpochIterator implements Iterator<Batch> {
        private final long myGeneration;
        private int step;

        EpochIterator(long epoch) {
            if (shuffle) {
                EpochPermutation.fill(order, seed, epoch);
            } else {
                for (int i = 0; i < order.length; i++) {
                    order[i] = i;
                }
            }
            myGeneration = ++generation;
        }

        @Override
        public boolean hasNext() {
            return step < steps;
        }

        @Override
        public Batch next() {
            if (myGeneration != generation) {
                throw new ConcurrentModificationException("another epoch's iteration started on this DataLoader; its"
                        + " buffers and sample order now belong to that iteration");
            }
            if (step >= steps) {
                throw new NoSuchElementException("epoch has " + steps + " steps");
            }
            int globalStart = step * globalBatch;
            int b = Math.min(globalBatch, order.length - globalStart);
            Batch batch = b == globalBatch ? fullBatch : lastBatch;
            int first = globalStart + shareStart(b);
            gather(batch, first, shareSize(b));
            batch.moveTo(step, first);
            step++;
            return batch;
        }
    }

    private void gather(Batch batch, int firstPosition, int rows) {
        for (int f = 0; f < sources.size(); f++) {
            MemorySegment src = sources.get(f).segment();
            MemorySegment dst = batch.field(f).segment();
            long bytes = rowBytes[f];
            for (int r = 0; r < rows; r++) {
                MemorySegment.copy(src, order[firstPosition + r] * bytes, dst, r * bytes, bytes);
            }
        }
    }

    /** Settings of a {@link DataLoader}; by default no shuffling, no drop_last, one rank. */
    public static final class Builder {
        private final Dataset dataset;
        private final int globalBatch;
        private boolean shuffle;
        private long seed;
        private boolean dropLast;
        private int rank;
        private int worldSize = 1;

        private Builder(Dataset dataset, int globalBatch) {
            this.dataset = dataset;
            this.globalBatch = globalBatch;
        }

        /** Shuffle every epoch with a permutation determined by {@code seed} and the epoch number. */
        public Builder shuffle(long seed) {
            this.shuffle = true;
            this.seed = seed;
            return this;
        }

        /** Skip the final global batch when it is shorter than the global batch size. */
        public Builder dropLast(boolean dropLast) {
            this.dropLast = dropLast;
            return this;
        }

        /** This loader feeds rank {@code rank} of {@code worldSize} data-parallel ranks. */
        public Builder shard(int rank, int worldSize) {
            this.rank = rank;
            this.worldSize = worldSize;
            return this;
        }

        public DataLoader build() {
            if (globalBatch < 1) {
                throw new IllegalArgumentException("global batch size must be at least 1, got " + globalBatch);
            }
            if (worldSize < 1 || rank < 0 || rank >= worldSize) {
                throw new IllegalArgumentException("rank " + rank + " is not in a world of " + worldSize + " ranks");
            }
            if (globalBatch < worldSize) {
                throw new IllegalArgumentException("global batch size " + globalBatch + " is smaller than the world size "
                        + worldSize + ": ranks " + globalBatch + ".." + (worldSize - 1) + " would never get a sample");
            }
            if (dataset.size() == 0) {
                throw new IllegalArgumentException("dataset is empty; nothing to batch");
            }
            if (dropLast && dataset.size() < globalBatch) {
                throw new IllegalArgumentException("dataset has " + dataset.size() + " samples, fewer than one global batch of "
                        + globalBatch + "; with drop_last no step would run");
            }
            return new DataLoader(this);
        }
    }
}
