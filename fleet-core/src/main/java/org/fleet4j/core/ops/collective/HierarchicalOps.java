package org.fleet4j.core.ops.collective;

import static org.fleet4j.core.ops.collective.CollectiveOpTypes.ALLGATHER;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.LEADERS_ALLREDUCE;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.NRANKS;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.REDUCE;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.REDUCE_ATTR;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.REDUCE_SCATTER;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.RING_ID;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.ROOT;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.dataType;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.waitLimit;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * The stages of hierarchical allreduce that {@link CollectiveOps} lacks. Reduce form (its third stage is
 * {@code c_broadcast}): {@code c_reduce} (X, Out = X, {@code ring_id}, {@code root}, {@code reduce} "sum" or "avg": in
 * place, the root of the ring ends with the reduction, the other ranks keep their values) and
 * {@code c_leaders_allreduce} (as {@code c_allreduce}, but a rank that is not a member of the ring, one that leads no
 * node, skips it: it gets the result from the broadcast that follows). Reduce-scatter/allgather form (its middle stage
 * is {@code c_allreduce} of the shard): {@code c_reducescatter} (X of n elements, Out: the shard of ceil(n / nranks);
 * rank i of the ring ends with the reduction of everyone's block i) and {@code c_allgather} (X, Shard; Out = X: every
 * rank's shard written back into X in rank order). When n does not divide by nranks both pad X to nranks whole
 * blocks in a buffer of their own (zeros beyond n), as the collective module wants equal blocks. All wait for their
 * group. Each kernel takes its ring's group from the job's execution context when it is made.
 */
final class HierarchicalOps {
    private HierarchicalOps() {
    }

    static List<OpSpec> specs() {
        return List.of(OpSpec.builder(REDUCE).in("X").out("Out")
                .attr(RING_ID, AttrType.INT, 0).attr(ROOT, AttrType.INT, 0).attr(REDUCE_ATTR, AttrType.STRING, "sum")
                .shape(CollectiveOps::inPlaceReduction)
                .kernel((op, context) -> {
                    ReduceOp reduce = CollectiveOpTypes.reduce(op);
                    ProcessGroup group = context.ring(CollectiveOpTypes.ringId(op));
                    int root = CollectiveOpTypes.root(op, group);
                    Duration limit = waitLimit(group);
                    return args -> {
                        Tensor x = args.in("X");
                        group.reduce(x.segment(), dataType(x.dtype()), reduce, root).await(limit);
                        args.setOut("Out", x);
                    };
                }).build(),
            OpSpec.builder(LEADERS_ALLREDUCE).in("X").out("Out")
                .attr(RING_ID, AttrType.INT, 0).attr(REDUCE_ATTR, AttrType.STRING, "sum")
                .shape(CollectiveOps::inPlaceReduction)
                .kernel((op, context) -> {
                    int ring = CollectiveOpTypes.ringId(op);
                    ReduceOp reduce = CollectiveOpTypes.reduce(op);
                    if (!context.isMember(ring)) {
                        return args -> args.setOut("Out", args.in("X"));
                    }
                    ProcessGroup group = context.ring(ring);
                    Duration limit = waitLimit(group);
                    return args -> {
                        Tensor x = args.in("X");
                        group.allreduce(x.segment(), dataType(x.dtype()), reduce).await(limit);
                        args.setOut("Out", x);
                    };
                }).build(),
            OpSpec.builder(REDUCE_SCATTER).in("X").out("Out")
                .attr(RING_ID, AttrType.INT, 0).attr(NRANKS, AttrType.INT, 1).attr(REDUCE_ATTR, AttrType.STRING, "sum")
                .shape(ctx -> {
                    CollectiveOpTypes.reduce(ctx.op());
                    ctx.set("Out", ctx.dtype("X"), shardSize(REDUCE_SCATTER, Shapes.numel(ctx.shape("X")),
                            ctx.op().intAttr(NRANKS)));
                })
                .kernel((op, context) -> {
                    int nranks = op.intAttr(NRANKS);
                    ReduceOp reduce = CollectiveOpTypes.reduce(op);
                    ProcessGroup group = ringOf(REDUCE_SCATTER, context, CollectiveOpTypes.ringId(op), nranks);
                    Duration limit = waitLimit(group);
                    PaddedBlocks padded = new PaddedBlocks();
                    return args -> {
                        Tensor x = args.in("X");
                        long shard = shardSize(REDUCE_SCATTER, x.numel(), nranks);
                        Tensor out = args.out("Out", x.dtype(), shard);
                        MemorySegment send = x.segment();
                        if (shard * nranks != x.numel()) {
                            send = padded.of(x.dtype(), shard * nranks);
                            MemorySegment.copy(x.segment(), 0, send, 0, x.byteSize());
                        }
                        group.reduceScatter(send, out.segment(), dataType(x.dtype()), reduce).await(limit);
                    };
                }).build(),
            OpSpec.builder(ALLGATHER).in("X", "Shard").out("Out")
                .attr(RING_ID, AttrType.INT, 0).attr(NRANKS, AttrType.INT, 1)
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel((op, context) -> {
                    int nranks = op.intAttr(NRANKS);
                    ProcessGroup group = ringOf(ALLGATHER, context, CollectiveOpTypes.ringId(op), nranks);
                    Duration limit = waitLimit(group);
                    PaddedBlocks padded = new PaddedBlocks();
                    return args -> {
                        Tensor x = args.in("X");
                        Tensor shard = args.in("Shard");
                        long expected = shardSize(ALLGATHER, x.numel(), nranks);
                        if (shard.numel() != expected || shard.dtype() != x.dtype()) {
                            throw new IrException(ALLGATHER + ": Shard (" + args.op().in("Shard") + ") is "
                                    + shard.dtype().displayName() + " " + Arrays.toString(shard.shape()) + "; expected "
                                    + x.dtype().displayName() + " [" + expected + "], 1/" + nranks + " of X ("
                                    + args.op().in("X") + ", " + x.numel() + " elements) rounded up");
                        }
                        boolean whole = expected * nranks == x.numel();
                        MemorySegment recv = whole ? x.segment() : padded.of(x.dtype(), expected * nranks);
                        group.allgather(shard.segment(), recv, dataType(x.dtype())).await(limit);
                        if (!whole) {
                            MemorySegment.copy(recv, 0, x.segment(), 0, x.byteSize());
                        }
                        args.setOut("Out", x);
                    };
                }).build());
    }

    /** The elements of each of {@code nranks} equal blocks that cover {@code numel}. */
    private static long shardSize(String type, long numel, int nranks) {
        if (nranks < 1) {
            throw new IrException(type + ": attribute '" + NRANKS + "' is " + nranks + "; expected the size of its ring (>= 1)");
        }
        return (numel + nranks - 1) / nranks;
    }

    private static ProcessGroup ringOf(String type, ExecContext context, int ring, int nranks) {
        ProcessGroup group = context.ring(ring);
        if (group.size() != nranks) {
            throw new IrException(type + ": attribute '" + NRANKS + "' is " + nranks + " but ring " + ring + " ('" + group.name()
                    + "') has " + group.size() + " ranks; the program was compiled for another layout of ranks");
        }
        return group;
    }

    /** One op's buffer of whole blocks for a bucket that does not divide by the ring size; zeros beyond the bucket. */
    private static final class PaddedBlocks {
        private Tensor buffer;

        MemorySegment of(DType dtype, long numel) {
            if (buffer == null || buffer.dtype() != dtype || buffer.numel() != numel) {
                buffer = Tensor.zeros(dtype, numel);
            }
            return buffer.segment();
        }
    }
}
