package org.fleet4j.pserver.table;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;
import org.fleet4j.core.tensor.OffHeapMemory;

/**
 * A server's block of a dense parameter: one off-heap record (value, optimizer slots, scalars) updated and read
 * under its own lock, so blocks of different parameters and servers never wait for each other.
 */
public final class DenseBlock {
    private final DenseSlicing.Block spec;
    private final ServerOptimizer optimizer;
    private final MemorySegment record;
    private final ReentrantLock lock = new ReentrantLock();

    DenseBlock(DenseSlicing.Block spec, DenseTableConfig config) {
        this.spec = spec;
        this.optimizer = config.optimizer();
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

    long bytes() {
        return record.byteSize();
    }

    /** Copies the value into {@code out} ({@code numel} floats). */
    public void pull(MemorySegment out) {
        checkSize(out, "out");
        lock.lock();
        try {
            MemorySegment.copy(record, 0, out, 0, spec.numel() * Float.BYTES);
        } finally {
            lock.unlock();
        }
    }

    /** Applies a gradient of {@code numel} floats (off-heap or byte-array backed). */
    public void push(MemorySegment grad) {
        checkSize(grad, "grad");
        lock.lock();
        try {
            optimizer.apply(record, grad, spec.numel());
        } finally {
            lock.unlock();
        }
    }

    /** Overwrites the value (a worker's initial parameters), leaving the optimizer state as it is. */
    public void set(MemorySegment values) {
        checkSize(values, "values");
        lock.lock();
        try {
            MemorySegment.copy(values, 0, record, 0, spec.numel() * Float.BYTES);
        } finally {
            lock.unlock();
        }
    }

    /** The whole record copied out under the lock: value and state from the same update. */
    float[] snapshot() {
        lock.lock();
        try {
            return record.toArray(ServerOptimizer.F);
        } finally {
            lock.unlock();
        }
    }

    /** Replaces the whole record. */
    void restore(float[] floats) {
        lock.lock();
        try {
            MemorySegment.copy(floats, 0, record, ServerOptimizer.F, 0, floats.length);
        } finally {
            lock.unlock();
        }
    }

    private void checkSize(MemorySegment s, String what) {
        if (s.byteSize() < spec.numel() * Float.BYTES) {
            throw new TableException("dense " + spec.param() + " block " + spec.block() + ": " + what + " holds "
                    + s.byteSize() + " bytes, the block has " + spec.numel() + " floats");
        }
    }
}
