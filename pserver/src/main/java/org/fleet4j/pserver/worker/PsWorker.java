package org.fleet4j.pserver.worker;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.fleet4j.pserver.compile.PsMode;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.table.DenseSlicing;
import org.fleet4j.pserver.table.KeyHash;
import org.fleet4j.pserver.table.TableStats;
import org.fleet4j.pserver.transport.PsBatch;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;

/**
 * A worker's routing client, synchronous: a dense parameter goes block by block to the servers the plan gives its
 * blocks ({@link DenseSlicing}), sparse ids go to {@link KeyHash#serverOf} (with one server, the caller's buffers go
 * as they are; with several, ids and rows are staged in reused {@link RoutedIds} buffers, so the steady state
 * allocates no off-heap memory). The calls to different servers run at once, one virtual thread each, and every
 * wait for a server is bounded by the connection's deadline (plus a second, so the transport's own deadline error,
 * which names the call, comes first) and names the server. The last server's call (with one server, every call) runs
 * on the caller's thread instead where its connection bounds its own calls ({@link PsConnection#boundsItsCalls}):
 * grpc, grpc++ and the star_server protocols.
 */
public final class PsWorker implements PsCommunicator, AutoCloseable {
    private static final Duration GRACE = Duration.ofSeconds(1);

    private final List<PsConnection> servers;
    private final Map<String, List<DenseSlicing.Block>> blocks = new LinkedHashMap<>();
    private final Map<String, Long> denseNumel = new LinkedHashMap<>();
    private final Map<String, Integer> sparseDims = new LinkedHashMap<>();
    private final Duration wait;
    private final Duration deadline;
    private final int worker;
    private final int workers;
    private final boolean sync;
    private final boolean barrier;
    private final ExecutorService calls = Executors.newVirtualThreadPerTaskExecutor();
    /** Routing buffers of sparse calls to several servers, one per call under way at once, reused. */
    private final ArrayDeque<RoutedIds> idleRouting = new ArrayDeque<>();

    /**
     * A client of the plan's tables over {@code servers} (connection {@code i} to server {@code i}), each wait bounded
     * by {@code deadline} (the connections' own).
     */
    public PsWorker(PsPlan plan, List<PsConnection> servers, Duration deadline) {
        this(plan, servers, deadline, 0, 1);
    }

    /**
     * Worker {@code worker} of {@code workers}. In sync mode every push of a sparse table reaches every server (empty
     * where the batch has no ids of that server), since a sync server counts each worker's pushes per step, and
     * {@link #sendBarrier} waits for all workers at server 0.
     */
    public PsWorker(PsPlan plan, List<PsConnection> servers, Duration deadline, int worker, int workers) {
        if (worker < 0 || worker >= workers) {
            throw new IllegalArgumentException("worker " + worker + " is outside 0.." + (workers - 1));
        }
        this.worker = worker;
        this.workers = workers;
        this.sync = plan.mode() == PsMode.SYNC;
        this.barrier = plan.mode().barrierPerStep();
        this.deadline = deadline;
        if (servers.size() != plan.servers()) {
            throw new IllegalArgumentException("the plan has " + plan.servers() + " server(s), but " + servers.size()
                    + " connection(s) were given");
        }
        this.servers = List.copyOf(servers);
        this.wait = deadline.plus(GRACE);
        for (DenseSlicing.Block b : plan.denseBlocks()) {
            blocks.computeIfAbsent(b.param(), k -> new ArrayList<>()).add(b);
            denseNumel.merge(b.param(), b.numel(), Long::sum);
        }
        plan.sparseTables().forEach(t -> sparseDims.put(t.name(), t.dim()));
    }

    @Override
    public void pullDense(String param, MemorySegment out) {
        List<DenseSlicing.Block> bs = blocksOf(param, out);
        perServer("pull_dense of " + param, server -> {
            for (DenseSlicing.Block b : bs) {
                if (b.server() == server) {
                    servers.get(server).pullDense(param, b.block(), slice(out, b));
                }
            }
        });
    }

    @Override
    public void pushDense(String param, MemorySegment grad) {
        List<DenseSlicing.Block> bs = blocksOf(param, grad);
        perServer("push_dense of " + param, server -> {
            for (DenseSlicing.Block b : bs) {
                if (b.server() == server) {
                    servers.get(server).pushDense(param, b.block(), slice(grad, b));
                }
            }
        });
    }

    @Override
    public void pullSparse(String table, MemorySegment ids, int n, MemorySegment out) {
        int dim = dimOf(table);
        if (servers.size() == 1) {
            perServer("pull_sparse of " + table, server -> servers.get(server).pullSparse(table, ids, n, out));
            return;
        }
        RoutedIds r = takeRouting();
        r.route(ids, n, dim, null);
        perServer("pull_sparse of " + table, server -> {
            if (r.count(server) > 0) {
                servers.get(server).pullSparse(table, r.ids(server), r.count(server), r.rows(server, dim));
            }
        });
        r.scatter(dim, out);
        giveBack(r);
    }

    @Override
    public void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads) {
        int dim = dimOf(table);
        if (servers.size() == 1) {
            perServer("push_sparse of " + table, server -> servers.get(server).pushSparse(table, ids, n, grads));
            return;
        }
        RoutedIds r = takeRouting();
        r.route(ids, n, dim, grads);
        perServer("push_sparse of " + table, server -> {
            if (r.count(server) > 0 || sync) {
                servers.get(server).pushSparse(table, r.ids(server), r.count(server), r.rows(server, dim));
            }
        });
        giveBack(r);
    }

    /**
     * The step's pulls as one {@link PsConnection#pullMany} per server: each server's dense blocks and its share of
     * every table's ids go in one message, and the rows come back to the callers' buffers.
     */
    @Override
    public void pullFused(List<Dense> dense, List<Sparse> sparse) {
        List<RoutedIds> routed = route(sparse, false);
        List<PsBatch> batches = batches(dense, sparse, routed, false);
        perServer("pull_fused", server -> {
            if (!batches.get(server).isEmpty()) {
                servers.get(server).pullMany(batches.get(server));
            }
        });
        for (int i = 0; i < sparse.size(); i++) {
            RoutedIds r = routed.get(i);
            if (r != null) {
                r.scatter(dimOf(sparse.get(i).table()), sparse.get(i).rows());
            }
        }
        routed.stream().filter(r -> r != null).forEach(this::giveBack);
    }

    /** The step's pushes as one {@link PsConnection#pushMany} per server (sync mode: every table to every server). */
    @Override
    public void pushFused(List<Dense> dense, List<Sparse> sparse) {
        List<RoutedIds> routed = route(sparse, true);
        List<PsBatch> batches = batches(dense, sparse, routed, true);
        perServer("push_fused", server -> {
            if (!batches.get(server).isEmpty()) {
                servers.get(server).pushMany(batches.get(server));
            }
        });
        routed.stream().filter(r -> r != null).forEach(this::giveBack);
    }

    /** Each table's ids (and, pushing, rows) split by server in routing buffers; null entries with one server. */
    private List<RoutedIds> route(List<Sparse> sparse, boolean push) {
        List<RoutedIds> routed = new ArrayList<>();
        for (Sparse t : sparse) {
            if (servers.size() == 1) {
                routed.add(null);
            } else {
                RoutedIds r = takeRouting();
                r.route(t.ids(), t.n(), dimOf(t.table()), push ? t.rows() : null);
                routed.add(r);
            }
        }
        return routed;
    }

    /** Each server's part of a fused step: its dense blocks and its ids of every table ({@code routed} null: all). */
    private List<PsBatch> batches(List<Dense> dense, List<Sparse> sparse, List<RoutedIds> routed, boolean push) {
        List<PsBatch> out = new ArrayList<>();
        for (int server = 0; server < servers.size(); server++) {
            List<PsBatch.Dense> d = new ArrayList<>();
            for (Dense p : dense) {
                for (DenseSlicing.Block b : blocksOf(p.param(), p.values())) {
                    if (b.server() == server) {
                        d.add(new PsBatch.Dense(p.param(), b.block(), slice(p.values(), b)));
                    }
                }
            }
            List<PsBatch.Sparse> t = new ArrayList<>();
            for (int i = 0; i < sparse.size(); i++) {
                Sparse in = sparse.get(i);
                RoutedIds r = routed.get(i);
                int n = r == null ? in.n() : r.count(server);
                if (n > 0 || push && sync) {
                    t.add(r == null ? new PsBatch.Sparse(in.table(), in.ids(), in.n(), in.rows())
                            : new PsBatch.Sparse(in.table(), r.ids(server), n, r.rows(server, dimOf(in.table()))));
                }
            }
            out.add(new PsBatch(d, t));
        }
        return out;
    }

    /**
     * Sync and half-async: waits until every server has applied this worker's pushes ({@link PsConnection#awaitPushes}:
     * a push may return once written), then at server 0 until every worker has done so, so past the barrier every
     * server has applied the step's update. The barrier fails naming the workers that did not come within the
     * deadline.
     */
    @Override
    public void sendBarrier() {
        if (!barrier) {
            return;
        }
        for (PsConnection server : servers) {
            server.awaitPushes();
        }
        if (workers == 1) {
            return;
        }
        perServerZero("send_barrier", () -> servers.get(0).barrier("step", worker, workers, deadline));
    }

    /** Routing buffers no call is using, or new ones. */
    private RoutedIds takeRouting() {
        synchronized (idleRouting) {
            RoutedIds r = idleRouting.poll();
            return r != null ? r : new RoutedIds(servers.size());
        }
    }

    /**
     * Keeps {@code r} for the next call. Only after a call that succeeded: after a failure a server's call may still
     * be writing into them (it was cancelled, not joined), so those are left to the garbage collector.
     */
    private void giveBack(RoutedIds r) {
        synchronized (idleRouting) {
            idleRouting.push(r);
        }
    }

    /** Runs {@code call} on every server's connection at once (save, stop), each wait bounded and naming its server. */
    /** Every server's table figures, one list per server in server order (one call after another). */
    public List<List<TableStats>> stats() {
        List<List<TableStats>> out = new ArrayList<>();
        for (PsConnection c : servers) {
            out.add(c.stats());
        }
        return out;
    }

    public void eachServer(String what, Consumer<PsConnection> call) {
        perServer(what, server -> call.accept(servers.get(server)));
    }

    private void perServerZero(String what, Runnable call) {
        if (servers.get(0).boundsItsCalls()) {
            runHere(what, 0, call);
            return;
        }
        Future<?> f = calls.submit(call);
        try {
            awaitServer(what, 0, f, System.nanoTime() + wait.toNanos());
        } finally {
            f.cancel(true);
        }
    }

    /**
     * A call on this thread, for a connection that bounds its own calls: no hand-off to a virtual thread and back,
     * which cost two thread wake-ups a call. Fails as {@link #awaitServer} does.
     */
    private void runHere(String what, int server, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            throw failure(what, server, e);
        }
    }

    /** A server's call failed with {@code cause}: a PsException as it is (it names the call), else named here. */
    private PsException failure(String what, int server, Throwable cause) {
        if (cause instanceof PsException pe) {
            return pe;
        }
        return new PsException(what + ": server " + server + " (" + servers.get(server).endpoint() + ") failed: "
                + cause.getMessage(), cause);
    }

    private interface ServerCall {
        void run(int server);
    }

    /**
     * Runs {@code call} for every server at once and waits for all, each wait bounded and naming its server. The last
     * server's call runs on this thread when its connection bounds its own calls (with one server, the only call).
     */
    private void perServer(String what, ServerCall call) {
        int last = servers.size() - 1;
        int here = servers.get(last).boundsItsCalls() ? last : -1;
        List<Future<?>> pending = new ArrayList<>();
        for (int s = 0; s <= last; s++) {
            int server = s;
            if (s != here) {
                pending.add(calls.submit(() -> call.run(server)));
            }
        }
        try {
            if (here >= 0) {
                runHere(what, here, () -> call.run(here));
            }
            long until = System.nanoTime() + wait.toNanos();
            for (int s = 0; s < pending.size(); s++) {
                awaitServer(what, s, pending.get(s), until);
            }
        } finally {
            pending.forEach(f -> f.cancel(true));
        }
    }

    private void awaitServer(String what, int server, Future<?> f, long until) {
        String who = "server " + server + " (" + servers.get(server).endpoint() + ")";
        try {
            f.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new PsException(what + ": " + who + " did not answer within " + wait.toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PsException(what + ": interrupted while waiting for " + who, e);
        } catch (ExecutionException e) {
            throw failure(what, server, e.getCause());
        }
    }

    private List<DenseSlicing.Block> blocksOf(String param, MemorySegment values) {
        List<DenseSlicing.Block> bs = blocks.get(param);
        if (bs == null) {
            throw new PsException("no dense table " + param + " in the parameter-server plan; its dense tables are "
                    + blocks.keySet());
        }
        long bytes = denseNumel.get(param) * Float.BYTES;
        if (values.byteSize() != bytes) {
            throw new PsException("dense table " + param + " holds " + denseNumel.get(param) + " floats, but the buffer"
                    + " has " + values.byteSize() + " bytes");
        }
        return bs;
    }

    private int dimOf(String table) {
        Integer dim = sparseDims.get(table);
        if (dim == null) {
            throw new PsException("no sparse table " + table + " in the parameter-server plan; its sparse tables are "
                    + sparseDims.keySet());
        }
        return dim;
    }

    private static MemorySegment slice(MemorySegment all, DenseSlicing.Block b) {
        return all.asSlice(b.offset() * Float.BYTES, b.numel() * Float.BYTES);
    }

    /** Stops the calls still running and closes the connections. */
    @Override
    public void close() {
        calls.shutdownNow();
        servers.forEach(PsConnection::close);
    }
}
