package org.fleet4j.gpu;

import java.lang.foreign.MemorySegment;
import org.fleet4j.collective.AbstractProcessGroup;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.GroupContext;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.OpCall;
import org.fleet4j.collective.ProcessGroup;

/**
 * The collective API over one {@link NcclCommunicator}, for buffers in GPU memory. The API passes buffers as
 * {@link MemorySegment}s; here a segment only carries a device address and a length ({@link #deviceSegment}) and is
 * never read by the host. The ranks, the rendezvous store and the timeout are those of a host group (the job's ring),
 * through which the NCCL unique id travels. Allreduce, broadcast and barrier run on NCCL; the other operations are
 * refused with an error naming them.
 */
public final class NcclProcessGroup extends AbstractProcessGroup {
    private final NcclCommunicator comm;
    private final Backend hostBackend;
    private final GpuDevice device;
    private GpuBuffer barrierWord;

    private NcclProcessGroup(GroupContext ctx, NcclCommunicator comm, Backend hostBackend, GpuDevice device) {
        super(ctx);
        this.comm = comm;
        this.hostBackend = hostBackend;
        this.device = device;
    }

    /**
     * Opens an NCCL communicator over the ranks of {@code host} (every rank calls this with its own GPU). The group is
     * named after the host group with "/nccl" appended.
     */
    public static NcclProcessGroup over(ProcessGroup host, GpuDevice device) {
        if (!(host instanceof AbstractProcessGroup base)) {
            throw new IllegalArgumentException("NCCL group over '" + host.name() + "': the host group must be one of"
                    + " Fleet4J's process groups (it supplies the rendezvous store)");
        }
        GroupContext h = base.context();
        GroupContext ctx = new GroupContext(h.jobId(), h.name() + "/nccl", h.rank(), h.globalRanks(), h.hostKeys(),
                h.store(), h.jobToken(), h.bindHost(), h.options());
        NcclCommunicator comm = NcclCommunicator.open(h.store(), ctx.name(), h.rank(), h.size(), device,
                h.options().timeout());
        return new NcclProcessGroup(ctx, comm, host.backend(), device);
    }

    /** A segment that stands for {@code bytes} bytes of device memory at {@code address}; the host must not read it. */
    public static MemorySegment deviceSegment(long address, long bytes) {
        return MemorySegment.ofAddress(address).reinterpret(bytes);
    }

    private GpuBuffer buffer(MemorySegment segment) {
        return new GpuBuffer(device, segment.address(), segment.byteSize());
    }

    /** The collective API has no NCCL backend value: this reports the host group's, through which the ids went. */
    @Override
    public Backend backend() {
        return hostBackend;
    }

    @Override
    protected void runAllreduce(OpCall call, MemorySegment buffer) {
        GpuBuffer b = buffer(buffer);
        comm.await(comm.allreduce(b, b, call.count(), call.dtype(), call.op()), describe(call), options().timeout());
    }

    @Override
    protected void runBroadcast(OpCall call, MemorySegment buffer) {
        comm.await(comm.broadcast(buffer(buffer), call.count(), call.dtype(), call.root()), describe(call),
                options().timeout());
    }

    /** An allreduce of one int32 word: it completes on a rank only once every rank has issued it. */
    @Override
    protected void runBarrier(OpCall call) {
        if (barrierWord == null) {
            barrierWord = device.allocate(4);
            device.zero(barrierWord);
        }
        comm.await(comm.allreduce(barrierWord, barrierWord, 1, org.fleet4j.collective.DataType.I32,
                org.fleet4j.collective.ReduceOp.SUM), describe(call), options().timeout());
    }

    @Override
    protected void runReduce(OpCall call, MemorySegment buffer) {
        throw notOnNccl(call);
    }

    @Override
    protected void runAllgather(OpCall call, MemorySegment send, MemorySegment recv) {
        throw notOnNccl(call);
    }

    @Override
    protected void runReduceScatter(OpCall call, MemorySegment send, MemorySegment recv) {
        throw notOnNccl(call);
    }

    @Override
    protected void runSend(OpCall call, MemorySegment buffer, int dst) {
        throw notOnNccl(call);
    }

    @Override
    protected void runRecv(OpCall call, MemorySegment buffer, int src) {
        throw notOnNccl(call);
    }

    private CollectiveException notOnNccl(OpCall call) {
        return new CollectiveException(describe(call) + ": NCCL group '" + name() + "' runs allreduce, broadcast and"
                + " barrier only; use the host group '" + ctx.name().replace("/nccl", "") + "' for this operation");
    }

    private String describe(OpCall call) {
        return call + " on " + ctx;
    }

    @Override
    public ProcessGroup subgroup(int... ranks) {
        throw new UnsupportedOperationException("NCCL group '" + name() + "': open subgroups on the host group and"
                + " an NcclProcessGroup over each");
    }

    @Override
    public ProcessGroup newGroup(String name, GroupOptions options) {
        throw new UnsupportedOperationException("NCCL group '" + name() + "': open further groups on the host group"
                + " and an NcclProcessGroup over each");
    }

    /** The communicator aborts itself on a failed or timed-out operation ({@link NcclCommunicator#await}). */
    @Override
    protected void abort(CollectiveException reason) {
    }

    @Override
    protected void release() {
        if (barrierWord != null) {
            device.free(barrierWord);
        }
        comm.close();
    }
}
