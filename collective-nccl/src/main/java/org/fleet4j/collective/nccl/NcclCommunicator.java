package org.fleet4j.collective.nccl;

import static org.bytedeco.cuda.global.cudart.cudaErrorNotReady;
import static org.bytedeco.cuda.global.cudart.cudaEventCreateWithFlags;
import static org.bytedeco.cuda.global.cudart.cudaEventDestroy;
import static org.bytedeco.cuda.global.cudart.cudaEventDisableTiming;
import static org.bytedeco.cuda.global.cudart.cudaEventQuery;
import static org.bytedeco.cuda.global.cudart.cudaEventRecord;
import static org.bytedeco.cuda.global.cudart.cudaGetErrorString;
import static org.bytedeco.cuda.global.cudart.cudaSetDevice;
import static org.bytedeco.cuda.global.cudart.cudaStreamCreateWithFlags;
import static org.bytedeco.cuda.global.cudart.cudaStreamDestroy;
import static org.bytedeco.cuda.global.cudart.cudaStreamNonBlocking;
import static org.bytedeco.cuda.global.cudart.cudaStreamSynchronize;
import static org.bytedeco.cuda.global.cudart.cudaStreamWaitEvent;
import static org.bytedeco.cuda.global.cudart.cudaSuccess;
import static org.bytedeco.cuda.global.nccl.ncclAllReduce;
import static org.bytedeco.cuda.global.nccl.ncclBroadcast;
import static org.bytedeco.cuda.global.nccl.ncclCommAbort;
import static org.bytedeco.cuda.global.nccl.ncclCommDestroy;
import static org.bytedeco.cuda.global.nccl.ncclCommGetAsyncError;
import static org.bytedeco.cuda.global.nccl.ncclCommInitRank;
import static org.bytedeco.cuda.global.nccl.ncclGetErrorString;
import static org.bytedeco.cuda.global.nccl.ncclGetUniqueId;
import static org.bytedeco.cuda.global.nccl.ncclGetVersion;
import static org.bytedeco.cuda.global.nccl.ncclInProgress;
import static org.bytedeco.cuda.global.nccl.ncclSuccess;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.bytedeco.cuda.cudart.CUevent_st;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.Pointer;
import org.fleet4j.cluster.Store;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.CudaBuffer;
import org.fleet4j.collective.group.DeviceCommunicator;
import org.fleet4j.collective.group.OpCall;

/**
 * One NCCL communicator on one GPU, with its own stream so that several communicators ({@code nccl_comm_num}) and
 * the compute stream overlap. Each operation is ordered after the work already issued on its buffer's stream, then
 * waited for while NCCL's asynchronous errors are polled; past the timeout the communicator is aborted
 * ({@code ncclCommAbort}) so that no rank hangs, and the error names the group and the operation.
 */
final class NcclCommunicator implements DeviceCommunicator {
    private final String group;
    private final int rank;
    private final int size;
    private final int device;
    private final CUstream_st stream = new CUstream_st();
    private final ncclComm comm = new ncclComm();
    private boolean aborted;

    private NcclCommunicator(String group, int rank, int size, int device) {
        this.group = group;
        this.rank = rank;
        this.size = size;
        this.device = device;
        bind();
        cuda(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking), "cudaStreamCreate");
    }

    /** Joins communicator {@code group} of {@code size} ranks on CUDA {@code device}; the id travels through the store. */
    static NcclCommunicator open(Store store, String group, int rank, int size, int device, Duration timeout) {
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
        check(ncclCommInitRank(c.comm, size, id, rank), "ncclCommInitRank (rank " + rank + " of " + size + ")", group);
        return c;
    }

    /** The NCCL library's version, e.g. "2.28.9". */
    static String version() {
        int[] v = new int[1];
        ncclGetVersion(v);
        return v[0] / 10000 + "." + (v[0] / 100) % 100 + "." + v[0] % 100;
    }

    @Override
    public Backend backend() {
        return Backend.NCCL;
    }

    @Override
    public void allreduce(OpCall call, CudaBuffer buffer, Duration timeout) {
        String what = what(call, buffer);
        Pointer data = at(buffer);
        issue(what, buffer, () -> ncclAllReduce(data, data, call.count(), NcclTypes.dtype(call.dtype()),
                NcclTypes.op(call.op()), comm, stream), timeout);
    }

    @Override
    public void broadcast(OpCall call, CudaBuffer buffer, Duration timeout) {
        String what = what(call, buffer);
        Pointer data = at(buffer);
        issue(what, buffer, () -> ncclBroadcast(data, data, call.count(), NcclTypes.dtype(call.dtype()), call.root(),
                comm, stream), timeout);
    }

    private String what(OpCall call, CudaBuffer buffer) {
        if (buffer.device() != device) {
            throw new IllegalArgumentException(call + " on NCCL group '" + group + "': the buffer is on cuda:"
                    + buffer.device() + " but the communicator on cuda:" + device);
        }
        return call + " on NCCL group '" + group + "' (rank " + rank + " of " + size + ")";
    }

    /** Orders {@code nccl} after the buffer stream's work, issues it on this communicator's stream and waits. */
    private void issue(String what, CudaBuffer buffer, java.util.function.IntSupplier nccl, Duration timeout) {
        if (aborted) {
            throw new CollectiveException(what + ": the communicator was aborted after an earlier failure");
        }
        bind();
        CUevent_st written = event();
        try {
            cuda(cudaEventRecord(written, new CUstream_st(new Address(buffer.stream()))), "cudaEventRecord");
            cuda(cudaStreamWaitEvent(stream, written, 0), "cudaStreamWaitEvent");
        } finally {
            cudaEventDestroy(written);
        }
        check(nccl.getAsInt(), what, group);
        CUevent_st done = event();
        try {
            cuda(cudaEventRecord(done, stream), "cudaEventRecord");
            await(done, what, timeout);
        } finally {
            cudaEventDestroy(done);
        }
    }

    /** NCCL offers no completion callback: poll the event and the asynchronous error until done or past the timeout. */
    private void await(CUevent_st done, String what, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int[] async = new int[1];
        while (true) {
            int status = cudaEventQuery(done);
            if (status == cudaSuccess) {
                return;
            }
            if (status != cudaErrorNotReady) {
                cuda(status, "cudaEventQuery after " + what);
            }
            check(ncclCommGetAsyncError(comm, async), "ncclCommGetAsyncError", group);
            if (async[0] != ncclSuccess && async[0] != ncclInProgress) {
                abort();
                throw new CollectiveException(what + " failed: " + ncclGetErrorString(async[0]).getString()
                        + "; the communicator was aborted");
            }
            if (System.nanoTime() > deadline) {
                abort();
                throw new CollectiveException(what + " did not finish within " + timeout.toMillis() + " ms; a peer is"
                        + " gone or stalled. The communicator was aborted (ncclCommAbort)");
            }
            LockSupport.parkNanos(20_000);
        }
    }

    private void abort() {
        if (!aborted) {
            aborted = true;
            ncclCommAbort(comm);
        }
    }

    /** NCCL and the runtime act on the calling thread's current device. */
    private void bind() {
        cuda(cudaSetDevice(device), "cudaSetDevice(" + device + ")");
    }

    private CUevent_st event() {
        CUevent_st e = new CUevent_st();
        cuda(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreate");
        return e;
    }

    private static Pointer at(CudaBuffer buffer) {
        return new Address(buffer.address());
    }

    private void cuda(int status, String call) {
        if (status != cudaSuccess) {
            throw new CollectiveException(call + " on cuda:" + device + " for NCCL group '" + group + "' failed: "
                    + cudaGetErrorString(status).getString());
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
        bind();
        if (!aborted) {
            cudaStreamSynchronize(stream);
            ncclCommDestroy(comm);
        }
        cudaStreamDestroy(stream);
    }

    /** A raw address (device memory, a stream handle) in the form JavaCPP's bindings take. */
    private static final class Address extends Pointer {
        Address(long address) {
            this.address = address;
        }
    }
}
