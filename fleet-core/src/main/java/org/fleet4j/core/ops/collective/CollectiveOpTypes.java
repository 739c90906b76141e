package org.fleet4j.core.ops.collective;

import java.time.Duration;
import java.util.Set;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.DType;

/**
 * The collective ops' vocabulary, spelt once for the compiler passes that insert them, the CPU kernels
 * ({@link CollectiveOps}, {@link HierarchicalOps}) and the GPU kernels: the op type names (Paddle's), their
 * attribute names, and readers that turn attributes into the collective module's terms and fail naming the op.
 */
public final class CollectiveOpTypes {
    /** In place: every rank ends with the reduction of everyone's X. */
    public static final String ALLREDUCE = "c_allreduce";
    /** The overlap pass's first half of an allreduce: issues it and returns its handle (Work) at once. */
    public static final String ALLREDUCE_START = "c_allreduce_start";
    /** The second half: waits for the handle of a {@link #ALLREDUCE_START}. */
    public static final String WAIT = "c_wait";
    /** In place: every rank ends with the root's X. */
    public static final String BROADCAST = "c_broadcast";
    /** Hierarchical allreduce, reduce form: the ring's root ends with the reduction. */
    public static final String REDUCE = "c_reduce";
    /** Hierarchical allreduce: an allreduce among the node leaders that the other ranks skip. */
    public static final String LEADERS_ALLREDUCE = "c_leaders_allreduce";
    /** Hierarchical allreduce, reduce-scatter form: rank i of the ring ends with the reduction of block i. */
    public static final String REDUCE_SCATTER = "c_reducescatter";
    /** Hierarchical allreduce, reduce-scatter form: every rank's shard written back into X in rank order. */
    public static final String ALLGATHER = "c_allgather";

    /** The ring (process group) an op runs on; ring 0 is the job's default group. */
    public static final String RING_ID = "ring_id";
    /** The reduction: "sum" or "avg". */
    public static final String REDUCE_ATTR = "reduce";
    /** The rank of the ring that a broadcast sends from or a reduce ends on. */
    public static final String ROOT = "root";
    /** The size of the ring a reduce-scatter or allgather was compiled for. */
    public static final String NRANKS = "nranks";

    /** Allreduce and broadcast: the collectives that a device group can run on device memory. */
    public static final Set<String> DEVICE_COLLECTIVES = Set.of(ALLREDUCE, ALLREDUCE_START, BROADCAST);

    private CollectiveOpTypes() {
    }

    public static int ringId(Op op) {
        return op.intAttr(RING_ID);
    }

    public static int root(Op op) {
        return op.intAttr(ROOT);
    }

    /** The op's root, which must be a rank of {@code group}, its ring's; fails naming the op, the ring and its size. */
    public static int root(Op op, ProcessGroup group) {
        int root = root(op);
        if (root < 0 || root >= group.size()) {
            throw new IrException(op.type() + ": root " + root + " is not a rank of ring " + ringId(op) + " ("
                    + group.size() + " ranks)");
        }
        return root;
    }

    /** The reduction of {@code op}'s {@code reduce} attribute. */
    public static ReduceOp reduce(Op op) {
        return reduceOf(op.type(), op.stringAttr(REDUCE_ATTR));
    }

    /** The reduction a {@code reduce} attribute names: "sum" or "avg"; anything else fails naming the op type. */
    public static ReduceOp reduceOf(String type, String name) {
        return switch (name) {
            case "sum" -> ReduceOp.SUM;
            case "avg" -> ReduceOp.AVG;
            default -> throw new IrException(type + ": attribute '" + REDUCE_ATTR + "' is '" + name
                    + "'; expected sum or avg");
        };
    }

    /** The collective module's dtype for a tensor dtype. */
    public static DataType dataType(DType dtype) {
        return switch (dtype) {
            case F32 -> DataType.F32;
            case F64 -> DataType.F64;
            case I32 -> DataType.I32;
            case I64 -> DataType.I64;
            case BF16 -> DataType.BF16;
        };
    }

    /**
     * How long a collective op waits for its group: a little beyond the group's own timeout, so the group's error
     * (which names the operation and the missing peers) comes first.
     */
    public static Duration waitLimit(ProcessGroup group) {
        return group.options().timeout().plusSeconds(5);
    }
}
