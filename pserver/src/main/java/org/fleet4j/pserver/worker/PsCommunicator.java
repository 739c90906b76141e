package org.fleet4j.pserver.worker;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * What the kernels of pull_dense, push_dense, pull_sparse and push_sparse call, found in the job's
 * {@link org.fleet4j.core.ops.ExecContext} as a service of this type. {@link PsWorker} is the synchronous one: each call
 * goes to the servers and returns when they answered, so a step's pushes are applied before the next step's pulls.
 * {@link AsyncCommunicator} (async and half-async: queues, merging, sender threads) and {@link GeoCommunicator} (local
 * training, deltas every k steps) implement this same interface around a {@link PsWorker}, and the worker program
 * does not change.
 */
public interface PsCommunicator {
    /** Fills {@code out} (the parameter's floats, row-major) with dense parameter {@code param}'s blocks. */
    void pullDense(String param, MemorySegment out);

    /** Sends the gradient of dense parameter {@code param} (its floats, row-major) to the servers of its blocks. */
    void pushDense(String param, MemorySegment grad);

    /** Fills {@code out} ({@code n} rows of the table's dimension) with the rows of {@code n} distinct int64 ids. */
    void pullSparse(String table, MemorySegment ids, int n, MemorySegment out);

    /** Sends {@code n} gradient rows of {@code n} distinct ids to the servers that hold them. */
    void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads);

    /** A whole dense parameter's floats, row-major: its values (pull) or its gradient (push). */
    record Dense(String param, MemorySegment values) {
    }

    /** {@code n} distinct int64 ids of a sparse table and their rows (pull: to fill; push: gradients). */
    record Sparse(String table, MemorySegment ids, int n, MemorySegment rows) {
    }

    /**
     * A step's pulls at once ({@code tensor_fuse}'s {@code pull_fused}): one message per server where the
     * communicator can; this default pulls each tensor on its own.
     */
    default void pullFused(List<Dense> dense, List<Sparse> sparse) {
        dense.forEach(d -> pullDense(d.param(), d.values()));
        sparse.forEach(t -> pullSparse(t.table(), t.ids(), t.n(), t.rows()));
    }

    /** A step's pushes at once ({@code push_fused}); this default pushes each tensor on its own. */
    default void pushFused(List<Dense> dense, List<Sparse> sparse) {
        dense.forEach(d -> pushDense(d.param(), d.values()));
        sparse.forEach(t -> pushSparse(t.table(), t.ids(), t.n(), t.rows()));
    }

    /**
     * The end of a step (op send_barrier; see {@link org.fleet4j.pserver.compile.PsOpTypes#SEND_BARRIER}): sync and
     * half-async return once every worker's pushes of the step were applied, or fail naming who did not come; geo
     * exchanges deltas every k steps.
     */
    void sendBarrier();

    /**
     * Sends whatever this communicator still holds (queued gradients, geo's local progress) and returns once the
     * servers have taken it: before a checkpoint, an evaluation that must see every update, or the end of training.
     */
    default void flush() {
    }

    /**
     * After every worker flushed (a worker barrier): the next pulls read the servers' values, so that they hold every
     * worker's updates sent before the barrier. The synchronous worker always reads the servers; async forgets the
     * dense values it last received, geo brings its local copies to the servers' values.
     */
    default void catchUp() {
    }
}
