package org.fleet4j.pserver.transport;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.fleet4j.pserver.table.SaveIdentity;
import org.fleet4j.pserver.table.TableStats;

/**
 * A connection that is opened by its first call instead of at once: a worker with {@code launch_barrier: false}
 * starts without waiting for its servers. Opening retries a server that is not up yet until the connection's
 * deadline (the transports' connect waits for the server that long), then fails naming the server; a failed open is
 * tried again by the next call. Calls from several threads share the one opened connection.
 */
public final class ConnectOnFirstCall implements PsConnection {
    private final String endpoint;
    private final PsTransport transport;
    private final PsOptions options;
    private PsConnection opened;
    private boolean closed;

    /** Opens {@code transport}'s connection to {@code endpoint} with {@code options} at the first call. */
    public ConnectOnFirstCall(PsTransport transport, String endpoint, PsOptions options) {
        this.transport = transport;
        this.endpoint = endpoint;
        this.options = options;
    }

    /** One per endpoint, none opened yet. */
    public static List<PsConnection> all(PsTransport transport, List<String> endpoints, PsOptions options) {
        return endpoints.stream().<PsConnection>map(e -> new ConnectOnFirstCall(transport, e, options.withEndpoint(e)))
                .toList();
    }

    private synchronized PsConnection connection() {
        if (closed) {
            throw new PsException("the connection to parameter server " + endpoint + " is closed");
        }
        if (opened == null) {
            opened = transport.connect(endpoint, options);
        }
        return opened;
    }

    @Override
    public String endpoint() {
        return endpoint;
    }

    /** As the opened connection says; false before the first call (connecting runs under the caller's bound). */
    @Override
    public synchronized boolean boundsItsCalls() {
        return opened != null && opened.boundsItsCalls();
    }

    @Override
    public void pullDense(String param, int block, MemorySegment out) {
        connection().pullDense(param, block, out);
    }

    @Override
    public void pushDense(String param, int block, MemorySegment grad) {
        connection().pushDense(param, block, grad);
    }

    @Override
    public void pullSparse(String table, MemorySegment ids, int n, MemorySegment out) {
        connection().pullSparse(table, ids, n, out);
    }

    @Override
    public void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads) {
        connection().pushSparse(table, ids, n, grads);
    }

    @Override
    public void pullMany(PsBatch batch) {
        connection().pullMany(batch);
    }

    @Override
    public void pushMany(PsBatch batch) {
        connection().pushMany(batch);
    }

    @Override
    public void barrier(String name, int worker, int workers, Duration timeout) {
        connection().barrier(name, worker, workers, timeout);
    }

    @Override
    public void save(Path dir, SaveIdentity save) {
        connection().save(dir, save);
    }

    @Override
    public void load(Path dir) {
        connection().load(dir);
    }

    @Override
    public List<TableStats> stats() {
        return connection().stats();
    }

    @Override
    public void stop() {
        connection().stop();
    }

    @Override
    public void awaitPushes() {
        PsConnection c;
        synchronized (this) {
            c = opened;
        }
        if (c != null) {
            c.awaitPushes();
        }
    }

    @Override
    public synchronized long wireBytes() {
        return opened == null ? 0 : opened.wireBytes();
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (opened != null) {
            opened.close();
        }
    }
}
