package org.fleet4j.core.ops.collective;

import static org.fleet4j.core.ops.collective.CollectiveOpTypes.ALLREDUCE;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.ALLREDUCE_START;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.BROADCAST;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.REDUCE_ATTR;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.RING_ID;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.ROOT;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.WAIT;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.dataType;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.waitLimit;

import java.time.Duration;
import java.util.List;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.Work;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ops.InferContext;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.SelectedRows;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Paddle's collective ops on the CPU: {@code c_allreduce} (X, Out = X, {@code ring_id}, {@code reduce} "sum" or "avg")
 * and {@code c_broadcast} (X, Out = X, {@code ring_id}, {@code root}). Both work in place on the tensor and wait for the
 * group. The overlap pass splits an allreduce in two: {@code c_allreduce_start} (as c_allreduce, plus Work: the handle
 * of the issued operation) returns at once while the group reduces X on its own thread; {@code c_wait} (X, Work;
 * Out = X) waits for the handle. Nothing may touch X in between. Each kernel takes its ring's group from the job's
 * execution context when it is made, not on every step.
 */
final class CollectiveOps {
    private CollectiveOps() {
    }

    /** Shape inference of an in-place reduction: Out is X, and the reduce attribute must name a reduction. */
    static void inPlaceReduction(InferContext ctx) {
        CollectiveOpTypes.reduce(ctx.op());
        ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
    }

    static List<OpSpec> specs() {
        return List.of(
                OpSpec.builder(ALLREDUCE).in("X").out("Out")
                        .attr(RING_ID, AttrType.INT, 0).attr(REDUCE_ATTR, AttrType.STRING, "sum")
                        .shape(CollectiveOps::inPlaceReduction)
                        .kernel((op, context) -> {
                            ProcessGroup group = context.ring(CollectiveOpTypes.ringId(op));
                            ReduceOp reduce = CollectiveOpTypes.reduce(op);
                            Duration limit = waitLimit(group);
                            return args -> {
                                if (args.inValue("X", 0) instanceof SelectedRows sparse) {
                                    args.setOut("Out", SparseAllreduce.run(sparse, group, reduce, limit));
                                    return;
                                }
                                Tensor x = args.in("X");
                                group.allreduce(x.segment(), dataType(x.dtype()), reduce).await(limit);
                                args.setOut("Out", x);
                            };
                        }).build(),
                OpSpec.builder(ALLREDUCE_START).in("X").out("Out", "Work")
                        .attr(RING_ID, AttrType.INT, 0).attr(REDUCE_ATTR, AttrType.STRING, "sum")
                        .shape(ctx -> {
                            CollectiveOpTypes.reduce(ctx.op());
                            ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
                            ctx.set("Work", DType.I64, 1);
                        })
                        .kernel((op, context) -> {
                            ProcessGroup group = context.ring(CollectiveOpTypes.ringId(op));
                            ReduceOp reduce = CollectiveOpTypes.reduce(op);
                            return args -> {
                                Tensor x = args.in("X");
                                args.setOut("Work", group.allreduce(x.segment(), dataType(x.dtype()), reduce));
                                args.setOut("Out", x);
                            };
                        }).build(),
                OpSpec.builder(WAIT).in("X", "Work").out("Out")
                        .attr(RING_ID, AttrType.INT, 0)
                        .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                        .kernel((op, context) -> {
                            Duration limit = waitLimit(context.ring(CollectiveOpTypes.ringId(op)));
                            return args -> {
                                if (!(args.inValue("Work", 0) instanceof Work work)) {
                                    throw new IrException(WAIT + ": Work (" + args.op().in("Work") + ") holds no"
                                            + " collective handle; it must be the Work output of a " + ALLREDUCE_START
                                            + " that ran before");
                                }
                                work.await(limit);
                                args.setOut("Out", args.in("X"));
                            };
                        }).build(),
                OpSpec.builder(BROADCAST).in("X").out("Out")
                        .attr(RING_ID, AttrType.INT, 0).attr(ROOT, AttrType.INT, 0)
                        .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                        .kernel((op, context) -> {
                            ProcessGroup group = context.ring(CollectiveOpTypes.ringId(op));
                            int root = CollectiveOpTypes.root(op, group);
                            Duration limit = waitLimit(group);
                            return args -> {
                                Tensor x = args.in("X");
                                group.broadcast(x.segment(), dataType(x.dtype()), root).await(limit);
                                args.setOut("Out", x);
                            };
                        }).build());
    }
}
