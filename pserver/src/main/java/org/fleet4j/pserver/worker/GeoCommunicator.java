package org.fleet4j.pserver.worker;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.fleet4j.core.ops.F32;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.pserver.compile.PsMode;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.ServerOptimizer;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.transport.PsException;

/**
 * Geo mode (GEO-SGD, Paddle's GeoCommunicator) around a {@link PsWorker}: the worker trains local copies of the
 * tables with their optimizers (the plan's, the same update rules as the optimizer ops) and every {@code k_steps}
 * steps exchanges with the servers, whose tables add what they are sent ({@link ServerOptimizer.Delta}):
 * <ul>
 * <li>dense: {@code delta = (local - synced) / workers}; {@code synced += delta}; push delta; pull the server's value;
 *     {@code local += server - synced}; {@code synced = server};</li>
 * <li>sparse: the same for every row touched since the last exchange.</li>
 * </ul>
 * A dense parameter is pulled on its first use; a sparse row is pulled on its first use in each window of k steps
 * (only rows the worker asks for are fetched, and none is older than one window), keeping its local optimizer state.
 * The exchange runs at the end of every k-th step (op send_barrier) on the training thread, up to
 * {@code thread_pool_size} tables at once, each call bounded by the connection's deadline and naming its server.
 * Called from one training thread.
 */
public final class GeoCommunicator implements PsCommunicator, AutoCloseable {
    private static final Duration GRACE = Duration.ofSeconds(1);

    private final PsWorker servers;
    private final int kSteps;
    private final float share;
    private final Duration wait;
    private final Map<String, LocalDense> dense = new LinkedHashMap<>();
    private final Map<String, GeoRows> sparse = new LinkedHashMap<>();
    private final CommunicatorThreads threads = new CommunicatorThreads();
    private final ExecutorService exchangers;
    private int stepsSinceExchange;
    private int window;
    /** Whether anything was trained since the last exchange. */
    private boolean trained;

    /** Worker of {@code workers} in {@code plan} (mode geo), over {@code servers}, each wait bounded by {@code deadline}. */
    public GeoCommunicator(PsPlan plan, PsWorker servers, Duration deadline, int workers) {
        if (plan.mode() != PsMode.GEO) {
            throw new IllegalArgumentException("the geo communicator runs geo mode, not " + plan.mode().spelling());
        }
        this.servers = servers;
        this.kSteps = plan.communicator().kSteps();
        this.share = 1f / workers;
        this.wait = deadline.plus(GRACE).multipliedBy(2);
        for (DenseTableConfig t : plan.denseTables()) {
            dense.put(t.name(), new LocalDense(t.name(), t.numel(), t.optimizer()));
        }
        for (SparseTableConfig t : plan.sparseTables()) {
            sparse.put(t.name(), new GeoRows(t.name(), t.dim(), t.optimizer()));
        }
        this.exchangers = threads.pool(plan.communicator().threadPoolSize(), "ps-geo-exchange");
    }

    @Override
    public void pullDense(String param, MemorySegment out) {
        LocalDense d = dense(param);
        d.ensurePulled();
        MemorySegment.copy(d.record, 0, out, 0, d.numel * Float.BYTES);
    }

    @Override
    public void pushDense(String param, MemorySegment grad) {
        LocalDense d = dense(param);
        d.ensurePulled();
        d.optimizer.apply(d.record, grad, d.numel);
        trained = true;
    }

    @Override
    public void pullSparse(String table, MemorySegment ids, int n, MemorySegment out) {
        GeoRows rows = rows(table);
        refresh(rows, ids, n);
        rows.copyValues(ids, n, out);
    }

    @Override
    public void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads) {
        GeoRows rows = rows(table);
        refresh(rows, ids, n);
        rows.train(ids, n, grads);
        trained = true;
    }

    /** The end of a step: every k-th one exchanges with the servers. */
    @Override
    public void sendBarrier() {
        if (++stepsSinceExchange >= kSteps) {
            exchange();
        }
    }

    /** Pushes the local progress since the last exchange (a partial window) and pulls the fresh values. */
    @Override
    public void flush() {
        if (trained) {
            exchange();
        }
    }

    /**
     * The local copies take the servers' values at their next use: each dense copy is pulled again as on its first use,
     * and a new window fetches each sparse row again. A copy's progress beyond the share it sent (GEO-SGD keeps
     * {@code 1 - 1/workers} of its own steps locally) is dropped, so that after a barrier of flushed workers every
     * worker reads the job's model; the optimizer state is kept.
     */
    @Override
    public void catchUp() {
        dense.values().forEach(d -> d.pulled = false);
        sparse.values().forEach(GeoRows::dropUnsentProgress);
        window++;
    }

    /** Steps trained locally since the last exchange. */
    public int stepsSinceExchange() {
        return stepsSinceExchange;
    }

    private void exchange() {
        List<String> names = new ArrayList<>();
        List<Future<?>> tasks = new ArrayList<>();
        for (LocalDense d : dense.values()) {
            if (d.pulled) {
                names.add("dense " + d.name);
                tasks.add(exchangers.submit(() -> exchangeDense(d)));
            }
        }
        for (GeoRows rows : sparse.values()) {
            if (rows.touchedCount() > 0) {
                names.add("sparse " + rows.name());
                tasks.add(exchangers.submit(() -> exchangeSparse(rows)));
            }
        }
        try {
            for (int i = 0; i < tasks.size(); i++) {
                await(names.get(i), tasks.get(i));
            }
        } finally {
            tasks.forEach(f -> f.cancel(true));
        }
        stepsSinceExchange = 0;
        trained = false;
        window++;
    }

    private void await(String what, Future<?> task) {
        try {
            task.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new PsException("geo exchange of " + what + " did not finish within " + wait.toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PsException("geo exchange of " + what + ": interrupted", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw new PsException("geo exchange of " + what + " failed: " + cause.getMessage(), cause);
        }
    }

    private void exchangeDense(LocalDense d) {
        long bytes = d.numel * Float.BYTES;
        MemorySegment value = d.record.asSlice(0, bytes);
        F32.sub(value, d.synced, d.scratch, d.numel);
        F32.scale(d.scratch, share, d.scratch, d.numel);
        F32.accumulate(d.synced, d.scratch, d.numel);
        servers.pushDense(d.name, d.scratch);
        servers.pullDense(d.name, d.scratch);
        catchUp(value, d.synced, d.scratch, d.numel);
    }

    private void exchangeSparse(GeoRows rows) {
        int n = rows.touchedCount();
        MemorySegment ids = rows.touchedIds();
        MemorySegment buffer = rows.deltas(share);
        servers.pushSparse(rows.name(), ids, n, buffer);
        servers.pullSparse(rows.name(), ids, n, buffer);
        rows.exchanged(ids, n, buffer, window + 1);
    }

    /** The rows of {@code ids} not yet fetched in this window come from the servers (local progress kept). */
    private void refresh(GeoRows rows, MemorySegment ids, int n) {
        GeoRows.Stale stale = rows.stale(ids, n, window);
        if (stale.count() > 0) {
            MemorySegment fresh = allocate((long) stale.count() * rows.dim() * Float.BYTES, "rows of " + rows.name());
            servers.pullSparse(rows.name(), stale.ids(), stale.count(), fresh);
            rows.catchUp(stale.ids(), stale.count(), fresh, window);
        }
    }

    /** local += server - synced; synced = server (what the others moved since this worker's last exchange). */
    static void catchUp(MemorySegment local, MemorySegment synced, MemorySegment server, long n) {
        F32.sub(server, synced, synced, n);
        F32.accumulate(local, synced, n);
        MemorySegment.copy(server, 0, synced, 0, n * Float.BYTES);
    }

    private LocalDense dense(String param) {
        LocalDense d = dense.get(param);
        if (d == null) {
            throw new PsException("no dense table " + param + " in the parameter-server plan; its dense tables are "
                    + dense.keySet());
        }
        return d;
    }

    private GeoRows rows(String table) {
        GeoRows r = sparse.get(table);
        if (r == null) {
            throw new PsException("no sparse table " + table + " in the parameter-server plan; its sparse tables are "
                    + sparse.keySet());
        }
        return r;
    }

    static MemorySegment allocate(long bytes, String what) {
        return OffHeapMemory.allocate(bytes, 64, () -> "the geo communicator's " + what);
    }

    /** Stops the exchange threads (an exchange under way ends at its deadline); the {@link PsWorker} stays open. */
    @Override
    public void close() {
        threads.stop(wait, exchangers);
    }

    /** A dense parameter's local copy: record [value | optimizer state], the value at the last exchange, a buffer. */
    private final class LocalDense {
        final String name;
        final long numel;
        final ServerOptimizer optimizer;
        final MemorySegment record;
        final MemorySegment synced;
        final MemorySegment scratch;
        boolean pulled;

        LocalDense(String name, long numel, ServerOptimizer optimizer) {
            this.name = name;
            this.numel = numel;
            this.optimizer = optimizer;
            this.record = allocate(optimizer.recordFloats(numel) * Float.BYTES, "copy of " + name);
            this.synced = allocate(numel * Float.BYTES, "synced values of " + name);
            this.scratch = allocate(numel * Float.BYTES, "buffer of " + name);
            optimizer.initState(record, numel);
        }

        void ensurePulled() {
            if (!pulled) {
                servers.pullDense(name, synced);
                MemorySegment.copy(synced, 0, record, 0, numel * Float.BYTES);
                pulled = true;
            }
        }
    }
}
