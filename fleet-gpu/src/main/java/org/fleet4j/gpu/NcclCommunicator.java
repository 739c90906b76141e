package org.fleet4j.gpu;

import static org.bytedeco.cuda.global.nccl.ncclAllReduce;
import static org.bytedeco.cuda.global.nccl.ncclBroadcast;
import static org.bytedeco.cuda.global.nccl.ncclCommAbort;
import static org.bytedeco.cuda.global.nccl.ncclCommDestroy;
import static org.bytedeco.cuda.global.nccl.ncclCommGetAsyncError;
import static org.bytedeco.cuda.global.nccl.ncclCommInitRank;
import static org.bytedeco.cuda.global.nccl.ncclGetErrorString;
import static org.bytedeco.cuda.global.nccl.ncclGetUniqueId;
import static org.bytedeco.cuda.global.nccl.ncclGetVersion;
import static org.bytedeco.cuda.global.nccl.ncclGroupEnd;
import static org.bytedeco.cuda.global.nccl.ncclGroupStart;
import static org.bytedeco.cuda.global.nccl.ncclInProgress;
import static org.bytedeco.cuda.global.nccl.ncclSuccess;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.store.Store;

/**
 * One NCCL communicator on one GPU, with its own stream so that several communicators ({@code nccl_comm_num}) and
 * the compute stream overlap. Operations are issued asynchronously; {@link #await} waits for them while polling
 * NCCL's asynchronous errors, and past the timeout aborts the communicator ({@code ncclCommAbort}) so that no rank
 * hangs, then raises an error naming the group and the operation.
 */
public final class NcclCommunicator implements AutoCloseable {
    private final String group;
    private final int rank;
    private final int size;
    private final GpuDevice device;
    private final CudaStream stream;
    private final ncclComm comm = new ncclComm();
    private boolean aborted;

    private NcclCommunicator(String group, int rank, int size, GpuDevice device) {
        this.group = group;
        this.rank = rank;
        this.size = size;
        this.device = device;
        this.stream = new CudaStream(device.name() + "/nccl:" + group);
    }

    /** Joins communicator {@code group} of {@code size} ranks; the unique id travels through {@code store}. */
    public static NcclCommunicator open(Store store, String group, int rank, int size, GpuDevice device, Duration timeout) {
        CudaLoader.require(CudaLibrary.NCCL);
        byte[] idBytes = NcclIdExchange.share(store, group, rank, () -> {
            ncclUniqueId id = new ncclUniqueId();
            check(ncclGetUniqueId(id), "ncclGetUniqueId", group);
            byte[] b = new byte[NcclIdExchange.ID_BYTES];
            id.internal().get(b);
            return b;
        }, timeout);
        ncclUniqueId id = new ncclUniqueId();
        id.internal().put(idBytes);
        NcclCommunicator c = new NcclCommunicator(group, rank, size, device);
        device.synchronize(); // binds the device on this thread, as ncclCommInitRank needs
        check(ncclCommInitRank(c.comm, size, id, rank), "ncclCommInitRank (rank " + rank + " of " + size + ")", group);
        return c;
    }

    public static String ncclVersion() {
        CudaLoader.require(CudaLibrary.NCCL);
        int[] v = new int[1];
        ncclGetVersion(v);
        return v[0] / 10000 + "." + (v[0] / 100) % 100 + "." + v[0] % 100;
    }

    public String group() {
        return group;
    }

    public int rank() {
        return rank;
    }

    public int size() {
        return size;
    }

    public CudaStream stream() {
        return stream;
    }

    /** Issues an allreduce of {@code count} elements from {@code send} into {@code recv} (which may be send). */
    public CudaEvent allreduce(GpuBuffer send, GpuBuffer recv, long count, DataType dtype, ReduceOp op) {
        return allreduce(send, recv, count, NcclTypes.dtype(dtype), dtype.byteSize(), op, dtype.displayName());
    }

    /** As {@link #allreduce(GpuBuffer, GpuBuffer, long, DataType, ReduceOp)} for fp16 gradients under AMP. */
    public CudaEvent allreduceFloat16(GpuBuffer send, GpuBuffer recv, long count, ReduceOp op) {
        return allreduce(send, recv, count, NcclTypes.float16(), 2, op, "fp16");
    }

    private CudaEvent allreduce(GpuBuffer send, GpuBuffer recv, long count, int ncclType, int elementBytes, ReduceOp op,
                                String typeName) {
        String what = "allreduce of " + count + " " + typeName;
        if (send.byteSize() < count * elementBytes || recv.byteSize() < count * elementBytes) {
            throw new IllegalArgumentException(what + " on NCCL group '" + group + "': buffers of " + send.byteSize()
                    + " and " + recv.byteSize() + " bytes are too small");
        }
        checkOpen(what);
        device.bind();
        try (CudaEvent written = new CudaEvent()) { // the data was written on the compute stream: order, don't block
            written.record(device.stream()).orderBefore(stream);
        }
        check(ncclAllReduce(GpuDevice.pointer(send), GpuDevice.pointer(recv), count, ncclType, NcclTypes.op(op), comm,
                stream.handle()), what, group);
        return new CudaEvent().record(stream);
    }

    /** Issues a broadcast of {@code count} elements of {@code buffer} from rank {@code root}, in place. */
    public CudaEvent broadcast(GpuBuffer buffer, long count, DataType dtype, int root) {
        String what = "broadcast of " + count + " " + dtype.displayName() + " from rank " + root;
        if (buffer.byteSize() < count * dtype.byteSize()) {
            throw new IllegalArgumentException(what + " on NCCL group '" + group + "': a buffer of " + buffer.byteSize()
                    + " bytes is too small");
        }
        if (root < 0 || root >= size) {
            throw new IllegalArgumentException(what + " on NCCL group '" + group + "': root must be a rank in [0, "
                    + size + ")");
        }
        checkOpen(what);
        device.bind();
        try (CudaEvent written = new CudaEvent()) {
            written.record(device.stream()).orderBefore(stream);
        }
        check(ncclBroadcast(GpuDevice.pointer(buffer), GpuDevice.pointer(buffer), count, NcclTypes.dtype(dtype), root, comm,
                stream.handle()), what, group);
        return new CudaEvent().record(stream);
    }

    /** Runs the calls of {@code body} (e.g. a bucket's allreduces) as one NCCL group, launched together. */
    public void grouped(Runnable body) {
        check(ncclGroupStart(), "ncclGroupStart", group);
        try {
            body.run();
        } finally {
            check(ncclGroupEnd(), "ncclGroupEnd", group);
        }
    }

    /**
     * Waits for an issued operation. NCCL's asynchronous errors are polled meanwhile; past {@code timeout} the
     * communicator is aborted, since a collective that waits on a dead peer never returns by itself.
     */
    public void await(CudaEvent done, String what, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int[] async = new int[1];
        try {
            while (!done.isDone()) {
                check(ncclCommGetAsyncError(comm, async), "ncclCommGetAsyncError", group);
                if (async[0] != ncclSuccess && async[0] != ncclInProgress) {
                    abort();
                    throw new CollectiveException(what + " on NCCL group '" + group + "' (rank " + rank + " of " + size
                            + ") failed: " + ncclGetErrorString(async[0]).getString() + "; the communicator was aborted");
                }
                if (System.nanoTime() > deadline) {
                    abort();
                    throw new CollectiveException(what + " on NCCL group '" + group + "' (rank " + rank + " of " + size
                            + ") did not finish within " + timeout.toMillis() + " ms; a peer is gone or stalled."
                            + " The communicator was aborted (ncclCommAbort)");
                }
                LockSupport.parkNanos(20_000); // poll cadence: NCCL offers no completion callback
            }
        } finally {
            done.close();
        }
    }

    private void abort() {
        if (!aborted) {
            aborted = true;
            ncclCommAbort(comm);
        }
    }

    private void checkOpen(String what) {
        if (aborted) {
            throw new CollectiveException(what + ": NCCL group '" + group + "' was aborted after an earlier failure");
        }
    }

    private static void check(int status, String call, String group) {
        if (status != ncclSuccess && status != ncclInProgress) {
            throw new CollectiveException(call + " on NCCL group '" + group + "' failed: "
                    + ncclGetErrorString(status).getString());
        }
    }

    @Override
    public void close() {
        if (!aborted) {
            stream.synchronize();
            ncclCommDestroy(comm);
        }
        stream.close();
    }
}
