package org.fleet4j.pserver.table;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import org.fleet4j.core.tensor.OffHeapMemory;

/**
 * A server's block of a dense parameter: one off-heap record (value, optimizer slots, scalars) that only its owner
 * ({@link ShardOwners}) reads and writes, one task at a time, so blocks need no lock and never wait for each other
 * unless they share an owner. The caller's buffers are read or filled on the owner's thread.
 */
public final class DenseBlock {
    private final DenseSlicing.Block spec;
    private final ServerOptimizer optimizer;
    private final MemorySegment record;
    private final ShardOwners owners;

    DenseBlock(DenseSlicing.Block spec, DenseTableConfig config, ShardOwners owners) {
        this.spec = spec;
        this.optimizer = config.optimizer();
        this.owners = owners;
        long bytes = optimizer.recordFloats(spec.numel()) * Float.BYTES;
        this.record = OffHeapMemory.allocate(bytes, 64, () -> "dense block " + spec);
        for (long e = 0; e < spec.numel(); e++) {
            record.setAtIndex(ServerOptimizer.F, e, config.initializer().value(0, spec.offset() + e));
        }
        optimizer.initState(record, spec.numel());
    }

    public DenseSlicing.Block spec() {
        return spec;
    }

    /** The owner whose thread alone touches this block ({@link KeyHash#ownerOfBlock} for the shard's owners). */
    public int owner() {
        return KeyHash.ownerOfBlock(spec.param(), spec.block(), owners.size());
    }

    long bytes() {
        return record.byteSize();
    }

    /** Copies the value into {@code out} ({@code numel} floats). */
    public void pull(MemorySegment out) {
        ShardOwners.join(pullAsync(out));
    }

    public CompletableFuture<Void> pullAsync(MemorySegment out) {
        checkSize(out, "out");
        return onOwner(() -> MemorySegment.copy(record, 0, out, 0, spec.numel() * Float.BYTES));
    }

    /** Applies a gradient of {@code numel} floats (off-heap or byte-array backed). */
    public void push(MemorySegment grad) {
        ShardOwners.join(pushAsync(grad));
    }

    public CompletableFuture<Void> pushAsync(MemorySegment grad) {
        checkSize(grad, "grad");
        return onOwner(() -> applyHere(grad));
    }

    /** The optimizer step itself; only on the owner's thread (sync mode's step sum applies from there). */
    void applyHere(MemorySegment grad) {
        optimizer.apply(record, grad, spec.numel());
    }

    /** Overwrites the value (a worker's initial parameters), leaving the optimizer state as it is. */
    public void set(MemorySegment values) {
        checkSize(values, "values");
        ShardOwners.join(onOwner(() -> MemorySegment.copy(values, 0, record, 0, spec.numel() * Float.BYTES)));
    }

    /** The whole record copied out on the owner: value and state from the same update. */
    float[] snapshot() {
        float[][] out = new float[1][];
        owners.run(owner(), () -> out[0] = record.toArray(ServerOptimizer.F));
        return out[0];
    }

    /** Replaces the whole record. */
    void restore(float[] floats) {
        owners.run(owner(), () -> MemorySegment.copy(floats, 0, record, ServerOptimizer.F, 0, floats.length));
    }

    /** Runs {@code task} on the owner; sync mode's step sum for this block runs there too. */
    CompletableFuture<Void> onOwner(Runnable task) {
        ShardOwners.Parts parts = new ShardOwners.Parts(1);
        parts.run(owners, owner(), task);
        return parts.done();
    }

    private void checkSize(MemorySegment s, String what) {
        if (s.byteSize() < spec.numel() * Float.BYTES) {
            throw new TableException("dense " + spec.param() + " block " + spec.block() + ": " + what + " holds "
                    + s.byteSize() + " bytes, the block has " + spec.numel() + " floats");
        }
    }
}
