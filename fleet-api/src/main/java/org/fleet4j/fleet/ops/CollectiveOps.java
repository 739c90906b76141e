package org.fleet4j.fleet.ops;

import java.time.Duration;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.Work;
import org.fleet4j.compiler.OverlapAllreducePass;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.SelectedRows;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Paddle's collective ops, registered from here because fleet-core does not know the collective module:
 * {@code c_allreduce} (X, Out = X, {@code ring_id}, {@code reduce} "sum" or "avg") and {@code c_broadcast}
 * (X, Out = X, {@code ring_id}, {@code root}). Both work in place on the tensor and wait for the group.
 * The overlap pass splits an allreduce in two: {@code c_allreduce_start} (as c_allreduce, plus Work: the handle of
 * the issued operation) returns at once while the group reduces X on its own thread; {@code c_wait} (X, Work; Out = X)
 * waits for the handle. Nothing may touch X in between.
 */
public final class CollectiveOps {
    public static final String ALLREDUCE = "c_allreduce";
    public static final String BROADCAST = "c_broadcast";
    public static final String ALLREDUCE_START = OverlapAllreducePass.START;
    public static final String WAIT = OverlapAllreducePass.WAIT;

    private CollectiveOps() {
    }

    /** Registers the ops; safe to call again. */
    public static void register() {
        OpRegistry.register(OpSpec.builder(ALLREDUCE).in("X").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("reduce", AttrType.STRING, "sum")
                .shape(ctx -> {
                    reduceOf(ALLREDUCE, ctx.op().stringAttr("reduce"));
                    ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
                })
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    ReduceOp reduce = reduceOf(ALLREDUCE, op.stringAttr("reduce"));
                    return args -> {
                        ProcessGroup group = Rings.get(ring);
                        if (args.inValue("X", 0) instanceof SelectedRows sparse) {
                            args.setOut("Out", SparseAllreduce.run(sparse, group, reduce, waitLimit(group)));
                            return;
                        }
                        Tensor x = args.in("X");
                        group.allreduce(x.segment(), dataType(x.dtype()), reduce).await(waitLimit(group));
                        args.setOut("Out", x);
                    };
                }).build());
        OpRegistry.register(OpSpec.builder(ALLREDUCE_START).in("X").out("Out", "Work")
                .attr("ring_id", AttrType.INT, 0).attr("reduce", AttrType.STRING, "sum")
                .shape(ctx -> {
                    reduceOf(ALLREDUCE_START, ctx.op().stringAttr("reduce"));
                    ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
                    ctx.set("Work", DType.I64, 1);
                })
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    ReduceOp reduce = reduceOf(ALLREDUCE_START, op.stringAttr("reduce"));
                    return args -> {
                        Tensor x = args.in("X");
                        args.setOut("Work", Rings.get(ring).allreduce(x.segment(), dataType(x.dtype()), reduce));
                        args.setOut("Out", x);
                    };
                }).build());
        OpRegistry.register(OpSpec.builder(WAIT).in("X", "Work").out("Out")
                .attr("ring_id", AttrType.INT, 0)
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    return args -> {
                        if (!(args.inValue("Work", 0) instanceof Work work)) {
                            throw new IrException(WAIT + ": Work (" + args.op().in("Work") + ") holds no collective handle;"
                                    + " it must be the Work output of a " + ALLREDUCE_START + " that ran before");
                        }
                        work.await(waitLimit(Rings.get(ring)));
                        args.setOut("Out", args.in("X"));
                    };
                }).build());
        OpRegistry.register(OpSpec.builder(BROADCAST).in("X").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("root", AttrType.INT, 0)
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    int root = op.intAttr("root");
                    return args -> {
                        Tensor x = args.in("X");
                        ProcessGroup group = Rings.get(ring);
                        if (root < 0 || root >= group.size()) {
                            throw new IrException("c_broadcast: root " + root + " is not a rank of ring " + ring
                                    + " (" + group.size() + " ranks)");
                        }
                        group.broadcast(x.segment(), dataType(x.dtype()), root).await(waitLimit(group));
                        args.setOut("Out", x);
                    };
                }).build());
    }

    /** The reduction an op's {@code reduce} attribute names: "sum" or "avg"; anything else fails naming the op type. */
    public static ReduceOp reduceOf(String type, String name) {
        return switch (name) {
            case "sum" -> ReduceOp.SUM;
            case "avg" -> ReduceOp.AVG;
            default -> throw new IrException(type + ": attribute 'reduce' is '" + name + "'; expected sum or avg");
        };
    }

    /**
     * How long a collective op waits for its group: a little beyond the group's own timeout, so the group's error
     * (which names the operation and the missing peers) comes first.
     */
    public static Duration waitLimit(ProcessGroup group) {
        return group.options().timeout().plusSeconds(5);
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
}
