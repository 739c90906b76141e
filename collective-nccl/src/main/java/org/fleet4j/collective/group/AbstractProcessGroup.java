package org.fleet4j.collective.group;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.CudaBuffer;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.Work;

/**
 * Argument checks, call numbering, ordering and failure handling shared by every backend. A backend implements
 * the {@code run*} methods, which execute synchronously on whichever thread the {@link OpQueue} picks and throw
 * {@link CollectiveException} naming the peers when something goes wrong. After the first failure the group is
 * broken: every later call fails at once with the original reason.
 */
public abstract class AbstractProcessGroup implements ProcessGroup {
    protected final GroupContext ctx;
    private final OpQueue queue;
    private final long[] sendSeq;
    private final long[] recvSeq;
    private final Map<String, Integer> subgroupCounts = new HashMap<>();
    private final List<AutoCloseable> closeAlso = new ArrayList<>();
    /** Its own lock: a registration waits for the other ranks and must not hold up calls on other threads. */
    private final Object registration = new Object();
    private Arena registered;
    /** Its own lock: opening a device backend waits for the other ranks. */
    private final Object deviceLock = new Object();
    private DeviceCommunicator device;
    private int deviceId;
    private long collectiveSeq;
    /** The running operation's; operations run one at a time, and only the thread that runs one reads it. */
    private StallWarning stall;
    private volatile CollectiveException broken;
    private volatile boolean closed;

    protected AbstractProcessGroup(GroupContext ctx) {
        this.ctx = ctx;
        this.queue = new OpQueue(ctx.name());
        this.sendSeq = new long[ctx.size()];
        this.recvSeq = new long[ctx.size()];
    }

    @Override
    public String name() {
        return ctx.name();
    }

    @Override
    public int rank() {
        return ctx.rank();
    }

    @Override
    public int size() {
        return ctx.size();
    }

    @Override
    public GroupOptions options() {
        return ctx.options();
    }

    public GroupContext context() {
        return ctx;
    }

    protected abstract void runAllreduce(OpCall call, MemorySegment buffer);

    protected abstract void runBroadcast(OpCall call, MemorySegment buffer);

    protected abstract void runReduce(OpCall call, MemorySegment buffer);

    protected abstract void runAllgather(OpCall call, MemorySegment send, MemorySegment recv);

    protected abstract void runReduceScatter(OpCall call, MemorySegment send, MemorySegment recv);

    protected abstract void runBarrier(OpCall call);

    protected abstract void runSend(OpCall call, MemorySegment buffer, int dst);

    protected abstract void runRecv(OpCall call, MemorySegment buffer, int src);

    /**
     * The stall warning of the operation that the calling thread runs: a backend's waits for peers
     * {@link StallWarning#check} it, so that a stalled peer is named long before the timeout.
     */
    protected StallWarning stallWarning() {
        return stall;
    }

    /** Called once, on the first failure: wake or disconnect peers so that they fail fast too. */
    protected abstract void abort(CollectiveException reason);

    /** Releases the backend's resources. */
    protected abstract void release();

    @Override
    public Work allreduce(MemorySegment buffer, DataType dtype, ReduceOp op) {
        OpCall call = collective(OpKind.ALLREDUCE, dtype, Objects.requireNonNull(op, "op"), -1, count(buffer, dtype, "buffer"));
        return submit(call, () -> runAllreduce(call, buffer));
    }

    @Override
    public Work broadcast(MemorySegment buffer, DataType dtype, int root) {
        OpCall call = collective(OpKind.BROADCAST, dtype, null, checkRank(root, "root"), count(buffer, dtype, "buffer"));
        return submit(call, () -> runBroadcast(call, buffer));
    }

    @Override
    public Work allreduce(CudaBuffer buffer, DataType dtype, ReduceOp op) {
        DeviceCommunicator comm = device(buffer.device(), "allreduce of " + buffer);
        OpCall call = collective(OpKind.ALLREDUCE, dtype, Objects.requireNonNull(op, "op"), -1, count(buffer, dtype));
        return submit(call, () -> comm.allreduce(call, buffer, options().timeout()));
    }

    @Override
    public Work broadcast(CudaBuffer buffer, DataType dtype, int root) {
        DeviceCommunicator comm = device(buffer.device(), "broadcast of " + buffer);
        OpCall call = collective(OpKind.BROADCAST, dtype, null, checkRank(root, "root"), count(buffer, dtype));
        return submit(call, () -> comm.broadcast(call, buffer, options().timeout()));
    }

    @Override
    public Backend deviceBackend(int cudaDevice) {
        return device(cudaDevice, "the device backend of cuda:" + cudaDevice).backend();
    }

    /** The communicator of the device backend, opened on first use under a sub-name of this group ("default/nccl"). */
    private DeviceCommunicator device(int cudaDevice, String what) {
        synchronized (deviceLock) {
            if (closed) {
                throw new IllegalStateException(what + ": " + ctx + " is closed");
            }
            if (device == null) {
                DeviceBackendProvider provider = Backends.cuda(what + " on " + ctx);
                GroupContext sub = new GroupContext(ctx.jobId(), ctx.name() + "/" + provider.backend().name(),
                        ctx.rank(), ctx.globalRanks(), ctx.hostKeys(), ctx.store(), ctx.jobToken(), ctx.bindHost(),
                        ctx.options());
                try {
                    device = provider.open(sub, cudaDevice);
                } catch (CollectiveException e) {
                    throw new CollectiveException(what + " on " + ctx + ": " + e.getMessage(), e);
                }
                deviceId = cudaDevice;
            } else if (deviceId != cudaDevice) {
                throw new IllegalArgumentException(what + " on " + ctx + ": this group's device backend runs on cuda:"
                        + deviceId + "; a rank uses one GPU per group");
            }
            return device;
        }
    }

    @Override
    public Work reduce(MemorySegment buffer, DataType dtype, ReduceOp op, int root) {
        OpCall call = collective(OpKind.REDUCE, dtype, Objects.requireNonNull(op, "op"), checkRank(root, "root"),
                count(buffer, dtype, "buffer"));
        return submit(call, () -> runReduce(call, buffer));
    }

    @Override
    public Work allgather(MemorySegment send, MemorySegment recv, DataType dtype) {
        long n = count(send, dtype, "send buffer");
        long total = count(recv, dtype, "recv buffer");
        if (total != n * size()) {
            throw new IllegalArgumentException("allgather on " + ctx + ": recv buffer holds " + total + " elements, expected "
                    + size() + " x " + n + " (group size x send count)");
        }
        OpCall call = collective(OpKind.ALLGATHER, dtype, null, -1, n);
        return submit(call, () -> runAllgather(call, send, recv));
    }

    @Override
    public Work reduceScatter(MemorySegment send, MemorySegment recv, DataType dtype, ReduceOp op) {
        long n = count(recv, dtype, "recv buffer");
        long total = count(send, dtype, "send buffer");
        if (total != n * size()) {
            throw new IllegalArgumentException("reduce_scatter on " + ctx + ": send buffer holds " + total
                    + " elements, expected " + size() + " x " + n + " (group size x recv count)");
        }
        OpCall call = collective(OpKind.REDUCE_SCATTER, dtype, Objects.requireNonNull(op, "op"), -1, n);
        return submit(call, () -> runReduceScatter(call, send, recv));
    }

    @Override
    public Work barrier() {
        OpCall call = collective(OpKind.BARRIER, DataType.I32, null, -1, 0);
        return submit(call, () -> runBarrier(call));
    }

    @Override
    public Work send(MemorySegment buffer, DataType dtype, int dst) {
        checkPeer(dst, "dst");
        long n = count(buffer, dtype, "buffer");
        OpCall call;
        synchronized (this) {
            call = new OpCall(OpKind.SEND_RECV, dtype, null, -1, n, sendSeq[dst]++);
        }
        return submit(call, () -> runSend(call, buffer, dst));
    }

    @Override
    public Work recv(MemorySegment buffer, DataType dtype, int src) {
        checkPeer(src, "src");
        long n = count(buffer, dtype, "buffer");
        OpCall call;
        synchronized (this) {
            call = new OpCall(OpKind.SEND_RECV, dtype, null, -1, n, recvSeq[src]++);
        }
        return submit(call, () -> runRecv(call, buffer, src));
    }

    @Override
    public ProcessGroup subgroup(int... ranks) {
        int[] sorted = ranks.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            checkRank(sorted[i], "subgroup rank");
            if (i > 0 && sorted[i] == sorted[i - 1]) {
                throw new IllegalArgumentException("subgroup of " + ctx + " lists rank " + sorted[i] + " twice");
            }
        }
        int myIndex = Arrays.binarySearch(sorted, rank());
        if (myIndex < 0) {
            throw new IllegalArgumentException("rank " + rank() + " is not in subgroup " + Arrays.toString(sorted)
                    + " of " + ctx + "; only the members call subgroup");
        }
        String list = Arrays.toString(sorted).replace(" ", "");
        int nth;
        synchronized (subgroupCounts) {
            nth = subgroupCounts.merge(list, 1, Integer::sum);
        }
        int[] global = new int[sorted.length];
        String[] hosts = new String[sorted.length];
        for (int i = 0; i < sorted.length; i++) {
            global[i] = ctx.globalRanks()[sorted[i]];
            hosts[i] = ctx.hostKeys()[sorted[i]];
        }
        GroupContext sub = new GroupContext(ctx.jobId(), ctx.name() + "/" + list + "#" + nth, myIndex, global, hosts,
                ctx.store(), ctx.jobToken(), ctx.bindHost(), ctx.options());
        return ProcessGroups.create(sub);
    }

    @Override
    public ProcessGroup newGroup(String name, GroupOptions options) {
        if (name == null || name.isBlank() || name.contains("/")) {
            throw new IllegalArgumentException("group name '" + name + "' must be non-empty and contain no '/'");
        }
        return ProcessGroups.create(new GroupContext(ctx.jobId(), name, ctx.rank(), ctx.globalRanks(), ctx.hostKeys(),
                ctx.store(), ctx.jobToken(), ctx.bindHost(), options));
    }

    /** Checks the arguments, then lets the backend provide the memory ({@link #allocateRegistered}). */
    @Override
    public final MemorySegment registeredBuffer(String name, long bytes) {
        if (name == null || name.isBlank() || name.contains("\n")) {
            throw new IllegalArgumentException("registeredBuffer on " + ctx + ": name '" + name
                    + "' must be non-empty and on one line");
        }
        if (bytes < 0) {
            throw new IllegalArgumentException("registeredBuffer '" + name + "' on " + ctx + ": " + bytes
                    + " bytes; expected 0 or more");
        }
        synchronized (registration) {
            if (closed) {
                throw new IllegalStateException("registeredBuffer '" + name + "': " + ctx + " is closed");
            }
            return allocateRegistered(name, bytes);
        }
    }

    /**
     * The memory of a registered buffer; this default, for backends that gain nothing from registration, is ordinary
     * page-aligned memory owned by the group and freed when it closes.
     */
    protected MemorySegment allocateRegistered(String name, long bytes) {
        if (registered == null) {
            registered = Arena.ofShared();
        }
        return registered.allocate(Math.max(1, bytes), 4096).asSlice(0, bytes);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        queue.close(new CollectiveException(ctx + " was closed before the operation started"));
        release();
        synchronized (deviceLock) {
            if (device != null) {
                device.close();
            }
        }
        synchronized (registration) {
            if (registered != null) {
                registered.close();
            }
        }
        for (AutoCloseable c : closeAlso) {
            try {
                c.close();
            } catch (Exception e) {
                System.getLogger(AbstractProcessGroup.class.getName())
                        .log(System.Logger.Level.WARNING, "closing " + c + " with " + ctx + " failed: " + e);
            }
        }
    }

    /** Closes {@code resource} together with this group (the store of the default group, the parts of a composite). */
    void alsoClose(AutoCloseable resource) {
        closeAlso.add(resource);
    }

    private synchronized OpCall collective(OpKind kind, DataType dtype, ReduceOp op, int root, long count) {
        Objects.requireNonNull(dtype, "dtype");
        return new OpCall(kind, dtype, op, root, count, collectiveSeq++);
    }

    private Work submit(OpCall call, Runnable body) {
        String description = call + " on " + ctx;
        QueuedWork w = new QueuedWork(description, () -> execute(call, body), queue);
        queue.submit(w);
        return w;
    }

    private void execute(OpCall call, Runnable body) {
        CollectiveException b = broken;
        if (b != null) {
            throw new CollectiveException(call + " on " + ctx + " not started: the group failed earlier: " + b.getMessage(), b);
        }
        stall = new StallWarning(ctx, call, System.nanoTime());
        try {
            body.run();
        } catch (CollectiveException e) {
            fail(e);
            throw e;
        } catch (RuntimeException | Error e) {
            CollectiveException wrapped = new CollectiveException(call + " on " + ctx + " failed: " + e, e);
            fail(wrapped);
            throw wrapped;
        }
    }

    private void fail(CollectiveException e) {
        boolean first;
        synchronized (this) {
            first = broken == null;
            if (first) {
                broken = e;
            }
        }
        if (first) {
            abort(e);
        }
    }

    private long count(MemorySegment buffer, DataType dtype, String what) {
        Objects.requireNonNull(buffer, what);
        Objects.requireNonNull(dtype, "dtype");
        if (buffer.byteSize() % dtype.byteSize() != 0) {
            throw new IllegalArgumentException(what + " of " + buffer.byteSize() + " bytes is not a whole number of "
                    + dtype.displayName() + " elements (" + dtype.byteSize() + " bytes each)");
        }
        if (buffer.isReadOnly() && !what.startsWith("send")) {
            throw new IllegalArgumentException(what + " is read-only; collectives write into their buffers");
        }
        return buffer.byteSize() / dtype.byteSize();
    }

    private long count(CudaBuffer buffer, DataType dtype) {
        Objects.requireNonNull(dtype, "dtype");
        if (buffer.byteSize() % dtype.byteSize() != 0) {
            throw new IllegalArgumentException("buffer of " + buffer + " is not a whole number of " + dtype.displayName()
                    + " elements (" + dtype.byteSize() + " bytes each)");
        }
        return buffer.byteSize() / dtype.byteSize();
    }

    private int checkRank(int r, String what) {
        if (r < 0 || r >= size()) {
            throw new IllegalArgumentException(what + " " + r + " is outside 0.." + (size() - 1) + " of " + ctx);
        }
        return r;
    }

    private void checkPeer(int r, String what) {
        checkRank(r, what);
        if (r == rank()) {
            throw new IllegalArgumentException(what + " " + r + " is this rank itself on " + ctx);
        }
    }
}
