package org.fleet4j.pserver.worker;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.fleet4j.pserver.table.SaveIdentity;
import org.fleet4j.pserver.table.TableStats;
import org.fleet4j.pserver.transport.PsConnection;

/**
 * A test connection around another: counts the pushes that reach the server, and while closed holds every push at the
 * door (after {@link #entered} counts down), so a test decides when a sender gets through.
 */
final class GatedConnection implements PsConnection {
    private final PsConnection server;
    private final CountDownLatch open;
    final CountDownLatch entered = new CountDownLatch(1);
    final AtomicInteger densePushes = new AtomicInteger();
    final AtomicInteger sparsePushes = new AtomicInteger();
    /** A permit per push that came to the door, for a test that waits for several at once. */
    final Semaphore arrivals = new Semaphore(0);
    /** The dense parameters pulled, in order. */
    final Queue<String> densePulls = new ConcurrentLinkedQueue<>();
    /** The threads that ran the sparse pulls, in order. */
    final Queue<Thread> sparsePullThreads = new ConcurrentLinkedQueue<>();
    /** What {@link #boundsItsCalls} says; a sparse pull throws {@link #failure} when set. */
    volatile boolean bounds;
    volatile RuntimeException failure;

    GatedConnection(PsConnection server, boolean closed) {
        this.server = server;
        this.open = new CountDownLatch(closed ? 1 : 0);
    }

    void open() {
        open.countDown();
    }

    boolean awaitEntered() throws InterruptedException {
        return entered.await(30, TimeUnit.SECONDS);
    }

    private void door() {
        entered.countDown();
        arrivals.release();
        try {
            open.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted at the gate");
        }
    }

    @Override
    public boolean boundsItsCalls() {
        return bounds;
    }

    @Override
    public String endpoint() {
        return server.endpoint();
    }

    @Override
    public void pullDense(String param, int block, MemorySegment out) {
        densePulls.add(param);
        server.pullDense(param, block, out);
    }

    @Override
    public void pushDense(String param, int block, MemorySegment grad) {
        door();
        densePushes.incrementAndGet();
        server.pushDense(param, block, grad);
    }

    @Override
    public void pullSparse(String table, MemorySegment ids, int n, MemorySegment out) {
        sparsePullThreads.add(Thread.currentThread());
        if (failure != null) {
            throw failure;
        }
        server.pullSparse(table, ids, n, out);
    }

    @Override
    public void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads) {
        door();
        sparsePushes.incrementAndGet();
        server.pushSparse(table, ids, n, grads);
    }

    @Override
    public void barrier(String name, int worker, int workers, Duration timeout) {
        server.barrier(name, worker, workers, timeout);
    }

    @Override
    public void save(Path dir, SaveIdentity save) {
        server.save(dir, save);
    }

    @Override
    public void load(Path dir) {
        server.load(dir);
    }

    @Override
    public List<TableStats> stats() {
        return server.stats();
    }

    @Override
    public void stop() {
        server.stop();
    }

    @Override
    public void close() {
        server.close();
    }
}
