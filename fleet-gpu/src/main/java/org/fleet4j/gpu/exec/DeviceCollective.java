package org.fleet4j.gpu.exec;

import java.time.Duration;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.gpu.NcclProcessGroup;

/**
 * {@code c_allreduce} and {@code c_broadcast} on device memory, in place, through the NCCL process group attached to
 * the op's ring: the tensor's buffer goes to NCCL as it is, with no host copy.
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
            case "c_allreduce", "c_allreduce_start" -> new DeviceCollective(group, false, switch (op.stringAttr("reduce")) {
                case "sum" -> ReduceOp.SUM;
                case "avg" -> ReduceOp.AVG;
                default -> throw new IllegalArgumentException("c_allreduce: attribute 'reduce' is '"
                        + op.stringAttr("reduce") + "'; expected sum or avg");
            }, 0);
            case "c_broadcast" -> new DeviceCollective(group, true, null, op.intAttr("root"));
            default -> throw new IllegalArgumentException(op.type() + " is not a collective op");
        };
    }

    @Override
    public void run(GpuOpArgs a) {
        DeviceTensor x = a.in("X");
        var segment = NcclProcessGroup.deviceSegment(x.buffer().address(), x.byteSize());
        DataType dtype = dataType(a, x);
        // a little beyond the group's own timeout, so the group's error (naming group and operation) comes first
        Duration limit = group.options().timeout().plusSeconds(5);
        (broadcast ? group.broadcast(segment, dtype, root) : group.allreduce(segment, dtype, reduce)).await(limit);
        a.setOut("Out", x);
    }

    private static DataType dataType(GpuOpArgs a, DeviceTensor x) {
        DType d = x.dtype();
        return switch (d) {
            case F32 -> DataType.F32;
            case F64 -> DataType.F64;
            case I32 -> DataType.I32;
            case I64 -> DataType.I64;
            case BF16 -> DataType.BF16;
        };
    }
}
