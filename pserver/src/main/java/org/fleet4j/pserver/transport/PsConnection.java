package org.fleet4j.pserver.transport;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.fleet4j.pserver.table.SaveIdentity;
import org.fleet4j.pserver.table.TableStats;

/**
 * A worker's connection to one parameter server, whatever the protocol. Each call mirrors the server's
 * {@link org.fleet4j.pserver.table.TableShard} method of the same name and waits at most the connection's deadline;
 * a call that fails or times out throws {@link PsException} naming the server's endpoint and the call. Buffers are
 * the caller's (off-heap): a transport may send from and receive into them without copies.
 */
public interface PsConnection extends AutoCloseable {
    /** The server's endpoint as the cluster describes it (host:port), for messages. */
    String endpoint();

    /** Copies block {@code block} of dense parameter {@code param} into {@code out}. */
    void pullDense(String param, int block, MemorySegment out);

    /** Hands the server a gradient for block {@code block} of {@code param}; it applies its optimizer. */
    void pushDense(String param, int block, MemorySegment grad);

    /** The rows of {@code n} ids (int64) of a sparse table, created on first pull, into {@code out} (n x dim floats). */
    void pullSparse(String table, MemorySegment ids, int n, MemorySegment out);

    /** Gradients (n x dim floats) for {@code n} ids; the server applies its optimizer row by row. */
    void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads);

    /**
     * Fills every buffer of {@code batch} as the single pulls would, in one message where the protocol can; this
     * default makes one call per entry.
     */
    default void pullMany(PsBatch batch) {
        for (PsBatch.Dense d : batch.dense()) {
            pullDense(d.param(), d.block(), d.values());
        }
        for (PsBatch.Sparse t : batch.sparse()) {
            pullSparse(t.table(), t.ids(), t.n(), t.rows());
        }
    }

    /**
     * Hands the server every gradient of {@code batch} as the single pushes would, in one message where the
     * protocol can; this default makes one call per entry.
     */
    default void pushMany(PsBatch batch) {
        for (PsBatch.Dense d : batch.dense()) {
            pushDense(d.param(), d.block(), d.values());
        }
        for (PsBatch.Sparse t : batch.sparse()) {
            pushSparse(t.table(), t.ids(), t.n(), t.rows());
        }
    }

    /**
     * Returns once the server has applied every push this connection has sent, and throws the failure of any of them.
     * A push may return once its frame is on its way, before the server has applied it (grpc++ and star_server with
     * servers that apply pushes as they come: the connection's next pull goes out behind it, and the server applies
     * the push first, so this worker still reads its own writes). Where another process must see the update (a barrier
     * between workers, a check of the server's tables), call this first. This default has nothing to wait for: its
     * pushes return applied.
     */
    default void awaitPushes() {
    }

    /**
     * True when every call of this connection ends by itself within its own deadline (failing, naming the call and
     * the server, when the server does not answer), so that a caller may run it on its own thread with no bounded wait
     * of its own around it. This default says false: a call may block for as long as the server lets it.
     */
    default boolean boundsItsCalls() {
        return false;
    }

    /**
     * Waits until all {@code workers} workers have reached barrier {@code name} on this server, or fails naming
     * those that did not come within {@code timeout}.
     */
    void barrier(String name, int worker, int workers, Duration timeout);

    /**
     * The server writes its shard of every table to {@code dir} (a path on the server's file system) as part of
     * {@code save}, the identity every server of this save is given.
     */
    void save(Path dir, SaveIdentity save);

    /** The server fills its tables from a checkpoint in {@code dir}, saved by any number of servers. */
    void load(Path dir);

    /** Keys, bytes and queue depths per table. */
    List<TableStats> stats();

    /** Asks the server to stop serving once the calls under way are answered. */
    void stop();

    /**
     * The bytes this connection has sent and received on its sockets so far, everything the protocol puts on the
     * wire (frames, headers, proofs; not TCP/IP headers), for benchmarks such as {@code ps_perf}; -1 where the
     * transport does not count them.
     */
    default long wireBytes() {
        return -1;
    }

    @Override
    void close();
}
