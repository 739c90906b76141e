package org.fleet4j.pserver.table;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Sync mode on a server: every worker pushes each of its tables exactly once per step (a sparse push with no ids
 * included), and the step's gradients of a dense block or a sparse table are averaged and applied as one update when
 * the last of the {@code workers} pushes arrives. Averaging is what Paddle's sync servers do (sum, then scale by
 * 1/trainers): with each worker's loss the mean over its own batch, the update is the one a single process makes on the
 * global batch. The workers' barrier after their pushes keeps a fast worker's next step out of this step's count.
 *
 * <p>No lock: a dense block's sum lives on the block's owner and is applied there; a sparse table's sum lives on the
 * table's step owner ({@link KeyHash#ownerOfSteps}), which hands the averaged rows to the stripes' owners when the
 * step is complete. The last push is answered once they have applied them, so any pull after the workers' barrier
 * sees the update, even on an owner that serves requests in place (grpc++'s network threads).
 */
final class StepAggregation {
    private static final System.Logger LOG = System.getLogger(StepAggregation.class.getName());
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;

    private final int workers;
    private final ShardOwners owners;
    private final Map<DenseBlock, DenseSum> dense = new LinkedHashMap<>();
    private final Map<SparseTable, SparseSum> sparse = new LinkedHashMap<>();

    StepAggregation(int workers, ShardOwners owners, Iterable<DenseBlock> blocks, Iterable<SparseTable> tables) {
        if (workers < 1) {
            throw new IllegalArgumentException("sync mode needs at least 1 worker, got " + workers);
        }
        this.workers = workers;
        this.owners = owners;
        blocks.forEach(b -> dense.put(b, new DenseSum(b.spec().numel())));
        tables.forEach(t -> sparse.put(t, new SparseSum()));
    }

    int workers() {
        return workers;
    }

    CompletableFuture<Void> pushDense(DenseBlock block, MemorySegment grad) {
        DenseSum sum = dense.get(block);
        if (grad.byteSize() < sum.values.byteSize()) {
            throw new TableException("dense block " + block.spec() + ": a gradient of " + grad.byteSize()
                    + " bytes is short of its " + sum.values.byteSize() / Float.BYTES + " floats");
        }
        return block.onOwner(() -> {
            MemorySegment acc = sum.values;
            long n = acc.byteSize() / Float.BYTES;
            for (long i = 0; i < n; i++) {
                acc.setAtIndex(F, i, acc.getAtIndex(F, i) + grad.getAtIndex(F, i));
            }
            if (++sum.pushes == workers) {
                for (long i = 0; i < n; i++) {
                    acc.setAtIndex(F, i, acc.getAtIndex(F, i) / workers);
                }
                block.applyHere(acc);
                acc.fill((byte) 0);
                sum.pushes = 0;
            }
        });
    }

    /**
     * Done when the push is counted, or for a step's last push when the step's update has been applied on every
     * stripe's owner: a worker answered after its barrier pulls the updated rows, whichever owner serves the pull.
     */
    CompletableFuture<Void> pushSparse(SparseTable table, MemorySegment ids, int n, MemorySegment grads) {
        SparseSum sum = sparse.get(table);
        int dim = table.config().dim();
        CompletableFuture<Void> applied = new CompletableFuture<>();
        ShardOwners.Parts parts = new ShardOwners.Parts(1);
        parts.run(owners, table.stepOwner(), () -> {
            sum.add(ids, n, grads, dim);
            if (++sum.pushes < workers) {
                applied.complete(null);
                return;
            }
            try {
                CompletableFuture<Void> update = sum.n > 0 ? applyMerged(table, sum, dim)
                        : CompletableFuture.completedFuture(null);
                sum.inUseUntil(update);
                update.whenComplete((done, failure) -> {
                    if (failure == null) {
                        applied.complete(null);
                    } else {
                        LOG.log(System.Logger.Level.ERROR, "sparse table " + table.name() + ": a sync step's update"
                                + " failed", failure);
                        applied.completeExceptionally(failure);
                    }
                });
            } finally {
                sum.clear();
            }
        });
        return parts.done().thenCompose(counted -> applied);
    }

    /** Sums the step's rows per distinct id (in first-seen order), averages them, and applies one update per row. */
    private CompletableFuture<Void> applyMerged(SparseTable table, SparseSum sum, int dim) {
        LongIndex index = new LongIndex(sum.n);
        long[] unique = new long[sum.n];
        float[] rows = new float[Math.multiplyExact(sum.n, dim)];
        int count = 0;
        for (int i = 0; i < sum.n; i++) {
            int at = index.putIfAbsent(sum.ids[i], count);
            if (at < 0) {
                unique[count] = sum.ids[i];
                at = count++;
            }
            for (int j = 0; j < dim; j++) {
                rows[at * dim + j] += sum.rows[i * dim + j];
            }
        }
        for (int k = 0; k < count * dim; k++) {
            rows[k] /= workers;
        }
        // handed to the stripes' owners, not awaited: this runs on an owner, which must not wait for owners
        return table.pushAsync(MemorySegment.ofArray(Arrays.copyOf(unique, count)), count,
                sum.nativeRows(rows, count * dim));
    }

    /** One dense block's sum of this step's gradients, in native memory, as the update rules read gradients. */
    private static final class DenseSum {
        final MemorySegment values;
        int pushes;

        DenseSum(long numel) {
            values = Arena.ofAuto().allocate(numel * Float.BYTES, 64);
        }
    }

    /** One sparse table's pushes of this step, kept as they came (the merge sums duplicate ids at the end). */
    private static final class SparseSum {
        long[] ids = new long[0];
        float[] rows = new float[0];
        int n;
        int pushes;
        /** The last step's averaged rows, handed to the table in native memory; reused once that update is done. */
        private MemorySegment merged = MemorySegment.NULL;
        private CompletableFuture<Void> mergedInUse = CompletableFuture.completedFuture(null);

        /**
         * The first {@code floats} of {@code rows} in native memory, for a table update that {@link #inUseUntil}
         * is then told of (the memory of an update not yet done is not reused). Native because the update rules'
         * vector loads, given heap arrays here and native memory elsewhere at the same call sites, fall back to
         * plain Java (docs/performance/pserver.md).
         */
        MemorySegment nativeRows(float[] rows, int floats) {
            long bytes = (long) floats * Float.BYTES;
            if (!mergedInUse.isDone() || merged.byteSize() < bytes) {
                long size = merged.byteSize() >= bytes ? merged.byteSize() : Math.max(bytes, 2 * merged.byteSize());
                merged = Arena.ofAuto().allocate(size, 64);
            }
            MemorySegment.copy(rows, 0, merged, F, 0, floats);
            return merged.asSlice(0, bytes);
        }

        void inUseUntil(CompletableFuture<Void> update) {
            mergedInUse = update;
        }

        void add(MemorySegment newIds, int count, MemorySegment newRows, int dim) {
            if (n + count > ids.length) {
                int capacity = Math.max(n + count, 2 * ids.length);
                ids = Arrays.copyOf(ids, capacity);
                rows = Arrays.copyOf(rows, Math.multiplyExact(capacity, dim));
            }
            for (int i = 0; i < count; i++) {
                ids[n + i] = newIds.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
            }
            MemorySegment.copy(newRows, F, 0, rows, n * dim, count * dim);
            n += count;
        }

        void clear() {
            n = 0;
            pushes = 0;
        }
    }
}
