package org.fleet4j.fleet.ops;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.compiler.HierarchicalAllreducePass;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ops.OpRegistry;
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
 * group.
 */
public final class HierarchicalOps {
    public static final String REDUCE = HierarchicalAllreducePass.REDUCE;
    public static final String LEADERS_ALLREDUCE = HierarchicalAllreducePass.LEADERS_ALLREDUCE;
    public static final String REDUCE_SCATTER = HierarchicalAllreducePass.REDUCE_SCATTER;
    public static final String ALLGATHER = HierarchicalAllreducePass.ALLGATHER;

    private HierarchicalOps() {
    }

    /** Registers the ops; safe to call again. */
    public static void register() {
        OpRegistry.register(OpSpec.builder(REDUCE).in("X").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("root", AttrType.INT, 0).attr("reduce", AttrType.STRING, "sum")
                .shape(ctx -> {
                    CollectiveOps.reduceOf(REDUCE, ctx.op().stringAttr("reduce"));
                    ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
                })
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    int root = op.intAttr("root");
                    ReduceOp reduce = CollectiveOps.reduceOf(REDUCE, op.stringAttr("reduce"));
                    return args -> {
                        Tensor x = args.in("X");
                        ProcessGroup group = Rings.get(ring);
                        if (root < 0 || root >= group.size()) {
                            throw new IrException(REDUCE + ": root " + root + " is not a rank of ring " + ring
                                    + " (" + group.size() + " ranks)");
                        }
                        group.reduce(x.segment(), CollectiveOps.dataType(x.dtype()), reduce, root).await(CollectiveOps.waitLimit(group));
                        args.setOut("Out", x);
                    };
                }).build());
        OpRegistry.register(OpSpec.builder(LEADERS_ALLREDUCE).in("X").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("reduce", AttrType.STRING, "sum")
                .shape(ctx -> {
                    CollectiveOps.reduceOf(LEADERS_ALLREDUCE, ctx.op().stringAttr("reduce"));
                    ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
                })
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    ReduceOp reduce = CollectiveOps.reduceOf(LEADERS_ALLREDUCE, op.stringAttr("reduce"));
                    return args -> {
                        Tensor x = args.in("X");
                        if (Rings.isMember(ring)) {
                            ProcessGroup group = Rings.get(ring);
                            group.allreduce(x.segment(), CollectiveOps.dataType(x.dtype()), reduce).await(CollectiveOps.waitLimit(group));
                        }
                        args.setOut("Out", x);
                    };
                }).build());
        OpRegistry.register(OpSpec.builder(REDUCE_SCATTER).in("X").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("nranks", AttrType.INT, 1).attr("reduce", AttrType.STRING, "sum")
                .shape(ctx -> {
                    CollectiveOps.reduceOf(REDUCE_SCATTER, ctx.op().stringAttr("reduce"));
                    ctx.set("Out", ctx.dtype("X"), shardSize(REDUCE_SCATTER, Shapes.numel(ctx.shape("X")),
                            ctx.op().intAttr("nranks")));
                })
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    int nranks = op.intAttr("nranks");
                    ReduceOp reduce = CollectiveOps.reduceOf(REDUCE_SCATTER, op.stringAttr("reduce"));
                    PaddedBlocks padded = new PaddedBlocks();
                    return args -> {
                        Tensor x = args.in("X");
                        ProcessGroup group = ringOf(REDUCE_SCATTER, ring, nranks);
                        long shard = shardSize(REDUCE_SCATTER, x.numel(), nranks);
                        Tensor out = args.out("Out", x.dtype(), shard);
                        MemorySegment send = x.segment();
                        if (shard * nranks != x.numel()) {
                            send = padded.of(x.dtype(), shard * nranks);
                            MemorySegment.copy(x.segment(), 0, send, 0, x.byteSize());
                        }
                        group.reduceScatter(send, out.segment(), CollectiveOps.dataType(x.dtype()), reduce)
                                .await(CollectiveOps.waitLimit(group));
                    };
                }).build());
        OpRegistry.register(OpSpec.builder(ALLGATHER).in("X", "Shard").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("nranks", AttrType.INT, 1)
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    int nranks = op.intAttr("nranks");
                    PaddedBlocks padded = new PaddedBlocks();
                    return args -> {
                        Tensor x = args.in("X");
                        Tensor shard = args.in("Shard");
                        ProcessGroup group = ringOf(ALLGATHER, ring, nranks);
                        long expected = shardSize(ALLGATHER, x.numel(), nranks);
                        if (shard.numel() != expected || shard.dtype() != x.dtype()) {
                            throw new IrException(ALLGATHER + ": Shard (" + args.op().in("Shard") + ") is "
                                    + shard.dtype().displayName() + " " + Arrays.toString(shard.shape()) + "; expected "
                                    + x.dtype().displayName() + " [" + expected + "], 1/" + nranks + " of X ("
                                    + args.op().in("X") + ", " + x.numel() + " elements) rounded up");
                        }
                        boolean whole = expected * nranks == x.numel();
                        MemorySegment recv = whole ? x.segment() : padded.of(x.dtype(), expected * nranks);
                        group.allgather(shard.segment(), recv, CollectiveOps.dataType(x.dtype())).await(CollectiveOps.waitLimit(group));
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
            throw new IrException(type + ": attribute 'nranks' is " + nranks + "; expected the size of its ring (>= 1)");
        }
        return (numel + nranks - 1) / nranks;
    }

    private static ProcessGroup ringOf(String type, int ring, int nranks) {
        ProcessGroup group = Rings.get(ring);
        if (group.size() != nranks) {
            throw new IrException(type + ": attribute 'nranks' is " + nranks + " but ring " + ring + " ('" + group.name()
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
