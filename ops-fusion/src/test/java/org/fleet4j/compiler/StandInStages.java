package org.fleet4j.compiler;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * One-process stand-ins for the hierarchical stages ({@code c_reduce}, {@code c_leaders_allreduce},
 * {@code c_broadcast}; {@code c_reducescatter}, {@code c_allgather}), same slots and attributes, as local rank 0 of
 * ranks whose gradients are all equal would see them with "avg": the first three leave X as it is,
 * {@code c_reducescatter} copies X's first block into the shard (zeros beyond X) and {@code c_allgather} copies the
 * shard back into that block. Every call is recorded (type, ring) so tests see the order.
 */
final class StandInStages {
    record Call(String type, int ring) {
    }

    static final List<Call> CALLS = new CopyOnWriteArrayList<>();

    private StandInStages() {
    }

    private static boolean registered;

    /** Puts the stand-ins in place of the real stages (which need a job's rings), once. */
    static synchronized void register() {
        if (registered) {
            return;
        }
        registered = true;
        for (String type : List.of(CollectiveOpTypes.REDUCE, CollectiveOpTypes.LEADERS_ALLREDUCE,
                CollectiveOpTypes.BROADCAST)) {
            OpRegistry.register(OpSpec.builder(type).in("X").out("Out")
                    .attr("ring_id", AttrType.INT, 0).attr("root", AttrType.INT, 0).attr("reduce", AttrType.STRING, "sum")
                    .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                    .kernel(op -> {
                        int ring = op.intAttr("ring_id");
                        return a -> {
                            CALLS.add(new Call(type, ring));
                            a.setOut("Out", a.in("X"));
                        };
                    }).build());
        }
        OpRegistry.register(OpSpec.builder(CollectiveOpTypes.REDUCE_SCATTER).in("X").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("nranks", AttrType.INT, 1).attr("reduce", AttrType.STRING, "sum")
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), (Shapes.numel(ctx.shape("X")) + ctx.op().intAttr("nranks") - 1)
                        / ctx.op().intAttr("nranks")))
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    int nranks = op.intAttr("nranks");
                    return a -> {
                        CALLS.add(new Call(CollectiveOpTypes.REDUCE_SCATTER, ring));
                        Tensor x = a.in("X");
                        Tensor shard = a.out("Out", x.dtype(), (x.numel() + nranks - 1) / nranks);
                        shard.segment().fill((byte) 0);
                        MemorySegment.copy(x.segment(), 0, shard.segment(), 0, Math.min(x.byteSize(), shard.byteSize()));
                    };
                }).build());
        OpRegistry.register(OpSpec.builder(CollectiveOpTypes.ALLGATHER).in("X", "Shard").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("nranks", AttrType.INT, 1)
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    return a -> {
                        CALLS.add(new Call(CollectiveOpTypes.ALLGATHER, ring));
                        Tensor x = a.in("X");
                        Tensor shard = a.in("Shard");
                        MemorySegment.copy(shard.segment(), 0, x.segment(), 0, Math.min(x.byteSize(), shard.byteSize()));
                        a.setOut("Out", x);
                    };
                }).build());
    }
}
