package org.fleet4j.pserver.worker;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.fleet4j.core.ops.F32;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.pserver.compile.CommunicatorSettings;
import org.fleet4j.pserver.compile.PsMode;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.LongIndex;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.transport.PsException;

/**
 * The communicator of async and half-async modes (Paddle's AsyncCommunicator and HalfAsyncCommunicator) around a
 * {@link PsWorker}. A push copies the gradient into its variable's queue ({@code send_queue_size}; a full queue makes
 * the training thread wait) and returns; {@code thread_pool_size} sender threads take up to {@code max_merge_var_num}
 * queued gradients of one variable, waiting up to {@code send_wait_times} times 10 ms for more, <b>sum</b> them (as
 * Paddle 2's communicator does, merge_add; sparse rows summed per id) and send the sum in one push. The servers apply
 * each push as it comes.
 * <ul>
 * <li>async: no barrier; dense values are received after each send of the variable, or on a thread of their own
 *     ({@code independent_recv_thread}), and a dense pull reads the latest received values without waiting for a
 *     server; sparse pulls go to the servers.</li>
 * <li>half-async: the same sends; {@link #sendBarrier} waits until this worker's queued gradients were applied and
 *     every worker came, and pulls then read the servers.</li>
 * </ul>
 * A failure on a sender or receiver thread is kept and thrown, with the server it names, by the training thread's next
 * call. Every wait is bounded; {@link #close} stops and joins the threads.
 */
public final class AsyncCommunicator implements PsCommunicator, AutoCloseable {
    private static final ValueLayout.OfLong ID = ValueLayout.JAVA_LONG_UNALIGNED;
    /** How often a training thread waiting for a full queue looks for a sender's failure. */
    private static final long FULL_QUEUE_POLL_MILLIS = 50;
    /** Longer than PsWorker's own grace, so that a send's failure, which names its server, comes first. */
    private static final Duration GRACE = Duration.ofSeconds(2);

    private final PsWorker servers;
    private final CommunicatorSettings settings;
    private final boolean halfAsync;
    private final Duration wait;
    private final Map<String, SendQueue> queues = new LinkedHashMap<>();
    private final Map<String, ReceivedDense> received = new LinkedHashMap<>();
    private final CommunicatorThreads threads = new CommunicatorThreads();
    private final ExecutorService senders;
    private final Thread receiver;
    /** Guards pending, sendsSinceReceive and failure; notified whenever one changes. */
    private final Object progress = new Object();
    private long pending;
    private long sendsSinceReceive;
    private long sends;
    private long gradientsSent;
    private PsException failure;
    private volatile boolean closed;

    /** A communicator for {@code plan}'s mode (async or half-async) over {@code servers}, each wait bounded by {@code deadline}. */
    public AsyncCommunicator(PsPlan plan, PsWorker servers, Duration deadline) {
        if (plan.mode() != PsMode.ASYNC && plan.mode() != PsMode.HALF_ASYNC) {
            throw new IllegalArgumentException("the async communicator runs async and half-async modes, not "
                    + plan.mode().spelling());
        }
        this.servers = servers;
        this.settings = plan.communicator();
        this.halfAsync = plan.mode() == PsMode.HALF_ASYNC;
        this.wait = deadline.plus(GRACE);
        for (DenseTableConfig t : plan.denseTables()) {
            queues.put(t.name(), new SendQueue(t.name(), 0, t.numel(), settings.sendQueueSize()));
            received.put(t.name(), new ReceivedDense(t.numel()));
        }
        for (SparseTableConfig t : plan.sparseTables()) {
            queues.put(t.name(), new SendQueue(t.name(), t.dim(), 0, settings.sendQueueSize()));
        }
        this.senders = threads.pool(settings.threadPoolSize(), "ps-async-send");
        if (!halfAsync && settings.independentRecvThread()) {
            receiver = threads.named("ps-async-recv").newThread(this::receiveLoop);
            receiver.start();
        } else {
            receiver = null;
        }
    }

    @Override
    public void pullDense(String param, MemorySegment out) {
        rethrow();
        ReceivedDense r = received.get(param);
        if (halfAsync || r == null || !r.copyTo(out)) {
            servers.pullDense(param, out);
            if (!halfAsync && r != null) {
                r.store(out);
            }
        }
    }

    @Override
    public void pushDense(String param, MemorySegment grad) {
        SendQueue q = queue(param, "push_dense");
        MemorySegment copy = allocate(grad.byteSize(), "gradient of " + param);
        MemorySegment.copy(grad, 0, copy, 0, grad.byteSize());
        enqueue(q, new Gradient(null, 0, copy), "push_dense of " + param);
    }

    @Override
    public void pullSparse(String table, MemorySegment ids, int n, MemorySegment out) {
        rethrow();
        servers.pullSparse(table, ids, n, out);
    }

    @Override
    public void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads) {
        SendQueue q = queue(table, "push_sparse");
        long rowBytes = (long) q.dim * Float.BYTES;
        MemorySegment idCopy = allocate(Math.max(1, n) * (long) Long.BYTES, "ids of " + table);
        MemorySegment rowCopy = allocate(Math.max(1, n) * rowBytes, "gradients of " + table);
        MemorySegment.copy(ids, 0, idCopy, 0, (long) n * Long.BYTES);
        MemorySegment.copy(grads, 0, rowCopy, 0, n * rowBytes);
        enqueue(q, new Gradient(idCopy, n, rowCopy), "push_sparse of " + table);
    }

    /** Half-async: every queued gradient applied, then every worker's arrival at server 0. Async: nothing to wait for. */
    @Override
    public void sendBarrier() {
        if (halfAsync) {
            flush();
            servers.sendBarrier();
        } else {
            rethrow();
        }
    }

    /**
     * Returns once every gradient queued so far has been pushed and the servers took it; fails naming the variables
     * still queued when no gradient got through for the deadline, or with a sender's failure.
     */
    @Override
    public void flush() {
        synchronized (progress) {
            long last = pending;
            long until = System.nanoTime() + wait.toNanos();
            while (pending > 0 && failure == null) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    throw new PsException("flush: " + pending + " queued gradient(s) of " + queuedNames()
                            + " were not sent: none got through to the servers within " + wait.toMillis() + " ms");
                }
                awaitProgress(left);
                if (pending < last) {
                    last = pending;
                    until = System.nanoTime() + wait.toNanos();
                }
            }
        }
        rethrow();
    }

    /**
     * Async: forgets the dense values received so far, so the next pull of each reads the servers (half-async pulls
     * read them always).
     */
    @Override
    public void catchUp() {
        rethrow();
        received.values().forEach(ReceivedDense::forget);
    }

    /**
     * What was sent so far, for the worker's log: how many gradients went out in how many sends (more than one a send
     * means the senders fell behind the training and merged, max_merge_var_num at most).
     */
    public String traffic() {
        synchronized (progress) {
            return String.format(Locale.ROOT, "%,d gradient(s) in %,d send(s), %.2f a send (max_merge_var_num %d)",
                    gradientsSent, sends, sends == 0 ? 0.0 : (double) gradientsSent / sends, settings.maxMergeVarNum());
        }
    }

    /** Gradients queued or being sent, not yet taken by the servers. */
    public long pending() {
        synchronized (progress) {
            return pending;
        }
    }

    private SendQueue queue(String name, String what) {
        SendQueue q = queues.get(name);
        if (q == null) {
            throw new PsException(what + ": no table " + name + " in the parameter-server plan; its tables are "
                    + queues.keySet());
        }
        return q;
    }

    private void enqueue(SendQueue q, Gradient g, String what) {
        rethrow();
        if (closed) {
            throw new PsException(what + ": the communicator is closed (after Fleet.stopWorker)");
        }
        synchronized (progress) {
            pending++;
        }
        boolean queued = false;
        try {
            long until = System.nanoTime() + wait.toNanos();
            while (!q.gradients.offer(g, FULL_QUEUE_POLL_MILLIS, TimeUnit.MILLISECONDS)) {
                rethrow();
                if (System.nanoTime() - until > 0) {
                    throw new PsException(what + ": the send queue of " + q.name + " (send_queue_size "
                            + settings.sendQueueSize() + ") stayed full for " + wait.toMillis() + " ms; its sender"
                            + " did not get through to the servers");
                }
            }
            queued = true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PsException(what + ": interrupted while the send queue of " + q.name + " was full", e);
        } finally {
            if (!queued) {
                sent(0, 1);
            }
        }
        schedule(q);
    }

    /** Gives {@code q} to a sender unless one has it already; one sender at a time keeps a variable's order. */
    private void schedule(SendQueue q) {
        if (!closed && q.scheduled.compareAndSet(false, true)) {
            try {
                senders.execute(() -> drain(q));
            } catch (RuntimeException e) {
                q.scheduled.set(false);
                throw new PsException("the communicator's senders have stopped", e);
            }
        }
    }

    private void drain(SendQueue q) {
        try {
            List<Gradient> batch = take(q);
            if (!batch.isEmpty()) {
                send(q, batch);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            fail(new PsException("async send of " + q.name + " failed: " + e.getMessage(), e));
        } finally {
            q.scheduled.set(false);
        }
        if (!q.gradients.isEmpty() && !closed && !failed()) {
            schedule(q);
        }
    }

    /** Up to max_merge_var_num gradients; an empty queue is waited for send_wait_times times, 10 ms each, in a row. */
    private List<Gradient> take(SendQueue q) throws InterruptedException {
        List<Gradient> batch = new ArrayList<>();
        int waits = 0;
        while (batch.size() < settings.maxMergeVarNum()) {
            Gradient g = q.gradients.poll();
            if (g == null) {
                if (batch.isEmpty() || waits >= settings.sendWaitTimes()) {
                    break;
                }
                waits++;
                g = q.gradients.poll(CommunicatorSettings.WAIT_MILLIS, TimeUnit.MILLISECONDS);
                if (g == null) {
                    continue;
                }
            }
            waits = 0;
            batch.add(g);
        }
        return batch;
    }

    private void send(SendQueue q, List<Gradient> batch) {
        if (q.dim == 0) {
            MemorySegment sum = batch.getFirst().values;
            for (int i = 1; i < batch.size(); i++) {
                F32.accumulate(sum, batch.get(i).values, q.numel);
            }
            servers.pushDense(q.name, sum);
            if (!halfAsync && !settings.independentRecvThread()) {
                servers.pullDense(q.name, q.staging());
                received.get(q.name).store(q.staging());
            }
        } else {
            Gradient merged = mergeRows(batch, q.dim, q.name);
            if (merged.n > 0) {
                servers.pushSparse(q.name, merged.ids, merged.n, merged.values);
            }
        }
        sent(1, batch.size());
    }

    /** The batch's rows summed per id, in order of first appearance. */
    private static Gradient mergeRows(List<Gradient> batch, int dim, String table) {
        if (batch.size() == 1) {
            return batch.getFirst();
        }
        int total = 0;
        for (Gradient g : batch) {
            total += g.n;
        }
        long rowBytes = (long) dim * Float.BYTES;
        LongIndex index = new LongIndex(Math.max(1, total));
        MemorySegment ids = allocate(Math.max(1, total) * (long) Long.BYTES, "merged ids of " + table);
        MemorySegment rows = allocate(Math.max(1, total) * rowBytes, "merged gradients of " + table);
        int count = 0;
        for (Gradient g : batch) {
            for (int i = 0; i < g.n; i++) {
                long id = g.ids.getAtIndex(ID, i);
                int at = index.putIfAbsent(id, count);
                MemorySegment row = g.values.asSlice(i * rowBytes, rowBytes);
                if (at < 0) {
                    ids.setAtIndex(ID, count, id);
                    MemorySegment.copy(row, 0, rows, count * rowBytes, rowBytes);
                    count++;
                } else {
                    F32.accumulate(rows.asSlice(at * rowBytes, rowBytes), row, dim);
                }
            }
        }
        return new Gradient(ids, count, rows);
    }

    /** Async with independent_recv_thread: pulls every dense table after sends happened since its last pull. */
    private void receiveLoop() {
        try {
            while (!closed) {
                synchronized (progress) {
                    while (sendsSinceReceive == 0 && !closed && failure == null) {
                        progress.wait(wait.toMillis());
                    }
                    if (closed || failure != null) {
                        return;
                    }
                    sendsSinceReceive = 0;
                }
                for (Map.Entry<String, ReceivedDense> e : received.entrySet()) {
                    MemorySegment staging = e.getValue().staging();
                    servers.pullDense(e.getKey(), staging);
                    e.getValue().store(staging);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            if (!closed) {
                fail(new PsException("receiving dense values failed: " + e.getMessage(), e));
            }
        }
    }

    private void sent(int sends, int gradients) {
        synchronized (progress) {
            pending -= gradients;
            sendsSinceReceive += sends;
            this.sends += sends;
            gradientsSent += sends == 0 ? 0 : gradients;
            progress.notifyAll();
        }
    }

    private void fail(PsException e) {
        synchronized (progress) {
            if (failure == null) {
                failure = e;
            }
            for (SendQueue q : queues.values()) {
                pending -= q.gradients.size();
                q.gradients.clear();
            }
            progress.notifyAll();
        }
    }

    private boolean failed() {
        synchronized (progress) {
            return failure != null;
        }
    }

    /** The training thread learns of a sender's failure at its next call, with the server the failure names. */
    private void rethrow() {
        PsException e;
        synchronized (progress) {
            e = failure;
        }
        if (e != null) {
            throw new PsException(e.getMessage(), e);
        }
    }

    private void awaitProgress(long nanos) {
        try {
            TimeUnit.NANOSECONDS.timedWait(progress, nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PsException("interrupted while waiting for the communicator's sends", e);
        }
    }

    private List<String> queuedNames() {
        List<String> names = new ArrayList<>();
        queues.values().stream().filter(q -> !q.gradients.isEmpty() || q.scheduled.get()).forEach(q -> names.add(q.name));
        return names;
    }

    /**
     * Stops the sender and receiver threads and waits for them (a call under way ends at its deadline); what is still
     * queued is dropped, so {@link #flush} first. The {@link PsWorker} stays open: its owner closes it.
     */
    @Override
    public void close() {
        closed = true;
        synchronized (progress) {
            progress.notifyAll();
        }
        threads.stop(wait, senders);
    }

    private static MemorySegment allocate(long bytes, String what) {
        return OffHeapMemory.allocate(bytes, 64, () -> "the async communicator's " + what);
    }

    /** A queued gradient: a dense parameter's values (ids null), or n sparse rows with their ids. */
    private record Gradient(MemorySegment ids, int n, MemorySegment values) {
    }

    /** One variable's queue; {@code dim} is a sparse table's row width, 0 for a dense parameter of {@code numel}. */
    private static final class SendQueue {
        final String name;
        final int dim;
        final long numel;
        final ArrayBlockingQueue<Gradient> gradients;
        final AtomicBoolean scheduled = new AtomicBoolean();
        private MemorySegment staging;

        SendQueue(String name, int dim, long numel, int capacity) {
            this.name = name;
            this.dim = dim;
            this.numel = numel;
            this.gradients = new ArrayBlockingQueue<>(capacity);
        }

        /** A dense parameter's buffer for receiving after a send; only this queue's one sender touches it. */
        MemorySegment staging() {
            if (staging == null) {
                staging = allocate(numel * Float.BYTES, "receive buffer of " + name);
            }
            return staging;
        }
    }

    /** The latest values of a dense parameter received from the servers, which async pulls read. */
    private static final class ReceivedDense {
        private final long numel;
        private MemorySegment values;
        /** Whether values holds what a pull may read: false before the first store and after {@link #forget}. */
        private boolean current;
        private MemorySegment staging;

        ReceivedDense(long numel) {
            this.numel = numel;
        }

        synchronized boolean copyTo(MemorySegment out) {
            if (!current) {
                return false;
            }
            MemorySegment.copy(values, 0, out, 0, numel * Float.BYTES);
            return true;
        }

        synchronized void store(MemorySegment from) {
            if (values == null) {
                values = allocate(numel * Float.BYTES, "received dense values");
            }
            MemorySegment.copy(from, 0, values, 0, numel * Float.BYTES);
            current = true;
        }

        /** Until the next store, {@link #copyTo} has nothing: the next pull reads the servers. */
        synchronized void forget() {
            current = false;
        }

        /** The receiver thread's own buffer. */
        MemorySegment staging() {
            if (staging == null) {
                staging = allocate(numel * Float.BYTES, "receive buffer");
            }
            return staging;
        }
    }
}
