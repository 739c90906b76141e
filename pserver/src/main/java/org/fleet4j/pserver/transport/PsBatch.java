package org.fleet4j.pserver.transport;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The tensors of one step for one server, sent as one message by {@link PsConnection#pullMany}/{@link
 * PsConnection#pushMany} ({@code tensor_fuse}): dense blocks and sparse tables' ids, each with its buffer (values to
 * fill for a pull, gradients for a push). Buffers are the caller's, as for the single calls.
 */
public record PsBatch(List<Dense> dense, List<Sparse> sparse) {
    public PsBatch {
        dense = List.copyOf(dense);
        sparse = List.copyOf(sparse);
    }

    /** Block {@code block} of dense parameter {@code param}: its values (pull) or gradient (push). */
    public record Dense(String param, int block, MemorySegment values) {
    }

    /** {@code n} int64 ids of sparse table {@code table} and their rows (pull: to fill; push: gradients). */
    public record Sparse(String table, MemorySegment ids, int n, MemorySegment rows) {
    }

    public boolean isEmpty() {
        return dense.isEmpty() && sparse.isEmpty();
    }
}
