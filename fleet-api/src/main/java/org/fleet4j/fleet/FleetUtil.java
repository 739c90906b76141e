package org.fleet4j.fleet;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;

/**
 * Collectives on small host values for training loops: the global loss, sample counts, a flag every rank must
 * agree on (Paddle's {@code fleet.util}). Every rank must make the same calls in the same order. Buffers come from
 * automatic arenas: after a timeout the group may still touch them, so they must not be freed early.
 */
public final class FleetUtil {
    private final ProcessGroup group;
    private final Duration timeout;

    FleetUtil(ProcessGroup group, Duration timeout) {
        this.group = group;
        this.timeout = timeout;
    }

    /** The reduction (sum, min, max, avg or prod) of every rank's value. */
    public double allReduce(double value, ReduceOp op) {
        return allReduce(new double[]{value}, op)[0];
    }

    public long allReduce(long value, ReduceOp op) {
        if (op == ReduceOp.AVG) {
            throw new IllegalArgumentException("avg of integers would truncate; reduce a double instead");
        }
        MemorySegment buf = Arena.ofAuto().allocate(Long.BYTES);
        buf.set(ValueLayout.JAVA_LONG, 0, value);
        group.allreduce(buf, DataType.I64, op).await(timeout);
        return buf.get(ValueLayout.JAVA_LONG, 0);
    }

    /** Element-wise reduction of every rank's array; all ranks pass arrays of the same length. */
    public double[] allReduce(double[] values, ReduceOp op) {
        MemorySegment buf = Arena.ofAuto().allocateFrom(ValueLayout.JAVA_DOUBLE, values);
        group.allreduce(buf, DataType.F64, op).await(timeout);
        return buf.toArray(ValueLayout.JAVA_DOUBLE);
    }

    /** Every rank's value, in rank order. */
    public double[] allGather(double value) {
        MemorySegment send = Arena.ofAuto().allocateFrom(ValueLayout.JAVA_DOUBLE, value);
        MemorySegment recv = Arena.ofAuto().allocate(ValueLayout.JAVA_DOUBLE, group.size());
        group.allgather(send, recv, DataType.F64).await(timeout);
        return recv.toArray(ValueLayout.JAVA_DOUBLE);
    }

    public long[] allGather(long value) {
        MemorySegment send = Arena.ofAuto().allocateFrom(ValueLayout.JAVA_LONG, value);
        MemorySegment recv = Arena.ofAuto().allocate(ValueLayout.JAVA_LONG, group.size());
        group.allgather(send, recv, DataType.I64).await(timeout);
        return recv.toArray(ValueLayout.JAVA_LONG);
    }
}
