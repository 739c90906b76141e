package org.fleet4j.fleet.ops;

import java.time.Duration;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.compiler.HierarchicalAllreducePass;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.Tensor;

/**
 * The stages of hierarchical allreduce that {@link CollectiveOps} lacks (the third stage is its {@code c_broadcast}):
 * {@code c_reduce} (X, Out = X, {@code ring_id}, {@code root}, {@code reduce} "sum" or "avg": in place, the root of
 * the ring ends with the reduction, the other ranks keep their values) and {@code c_leaders_allreduce} (as
 * {@code c_allreduce}, but a rank that is not a member of the ring, one that leads no node, skips it: it gets the
 * result from the broadcast that follows). Both wait for their group.
 */
public final class HierarchicalOps {
    public static final String REDUCE = HierarchicalAllreducePass.REDUCE;
    public static final String LEADERS_ALLREDUCE = HierarchicalAllreducePass.LEADERS_ALLREDUCE;

    private HierarchicalOps() {
    }

    /** Registers both ops; safe to call again. */
    public static void register() {
        OpRegistry.register(OpSpec.builder(REDUCE).in("X").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("root", AttrType.INT, 0).attr("reduce", AttrType.STRING, "sum")
                .shape(ctx -> {
                    reduceOf(REDUCE, ctx.op().stringAttr("reduce"));
                    ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
                })
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    int root = op.intAttr("root");
                    ReduceOp reduce = reduceOf(REDUCE, op.stringAttr("reduce"));
                    return args -> {
                        Tensor x = args.in("X");
                        ProcessGroup group = Rings.get(ring);
                        if (root < 0 || root >= group.size()) {
                            throw new IrException(REDUCE + ": root " + root + " is not a rank of ring " + ring
                                    + " (" + group.size() + " ranks)");
                        }
                        group.reduce(x.segment(), CollectiveOps.dataType(x.dtype()), reduce, root).await(waitLimit(group));
                        args.setOut("Out", x);
                    };
                }).build());
        OpRegistry.register(OpSpec.builder(LEADERS_ALLREDUCE).in("X").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("reduce", AttrType.STRING, "sum")
                .shape(ctx -> {
                    reduceOf(LEADERS_ALLREDUCE, ctx.op().stringAttr("reduce"));
                    ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
                })
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    ReduceOp reduce = reduceOf(LEADERS_ALLREDUCE, op.stringAttr("reduce"));
                    return args -> {
                        Tensor x = args.in("X");
                        if (Rings.isMember(ring)) {
                            ProcessGroup group = Rings.get(ring);
                            group.allreduce(x.segment(), CollectiveOps.dataType(x.dtype()), reduce).await(waitLimit(group));
                        }
                        args.setOut("Out", x);
                    };
                }).build());
    }

    private static ReduceOp reduceOf(String type, String name) {
        return switch (name) {
            case "sum" -> ReduceOp.SUM;
            case "avg" -> ReduceOp.AVG;
            default -> throw new IrException(type + ": attribute 'reduce' is '" + name + "'; expected sum or avg");
        };
    }

    /** A little beyond the group's own timeout, so the group's error (which names the missing peers) comes first. */
    private static Duration waitLimit(ProcessGroup group) {
        return group.options().timeout().plusSeconds(5);
    }
}
