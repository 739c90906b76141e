package org.fleet4j.gpu.exec;

import java.time.Duration;
import org.fleet4j.collective.CudaBuffer;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;

/**
 * {@code c_allreduce} and {@code c_broadcast} on device memory, in place, through the device backend (NCCL) of the
 * process group of the op's ring: the tensor's buffer goes to NCCL as it is, with no host copy.
 */
final class DeviceCollective implements GpuOpKernel {
    private final ProcessGroup group;
    private final boolean broadcast;
    private final ReduceOp reduce;
    private final int root;

    private DeviceCollective(ProcessGroup group, boolean broadcast, ReduceOp reduce, int root) {
        this.group = group;
        this.broadcast = broadcast;
        this.reduce = reduce;
        this.root = root;
    }

    static DeviceCollective of(Op op, ProcessGroup group) {
        return switch (op.type()) {
            case CollectiveOpTypes.ALLREDUCE, CollectiveOpTypes.ALLREDUCE_START ->
                    new DeviceCollective(group, false, CollectiveOpTypes.reduce(op), 0);
            case CollectiveOpTypes.BROADCAST -> new DeviceCollective(group, true, null, CollectiveOpTypes.root(op));
            default -> throw new IllegalArgumentException(op.type() + " is not a collective op");
        };
    }

    @Override
    public void run(GpuOpArgs a) {
        DeviceTensor x = a.in("X");
        CudaBuffer buffer = x.buffer().slice(0, x.byteSize()).forCollective();
        DataType dtype = CollectiveOpTypes.dataType(x.dtype());
        Duration limit = CollectiveOpTypes.waitLimit(group);
        (broadcast ? group.broadcast(buffer, dtype, root) : group.allreduce(buffer, dtype, reduce)).await(limit);
        a.setOut("Out", x);
    }
}
