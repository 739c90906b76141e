package org.fleet4j.compiler;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;

/**
 * One-process stand-ins for fleet-api's hierarchical stages ({@code c_reduce}, {@code c_leaders_allreduce},
 * {@code c_broadcast}), same slots and attributes. Each leaves X as it is, which is what the three stages do to
 * gradients that are equal on every rank with "avg"; every call is recorded (type, ring) so tests see the order.
 */
final class StandInStages {
    record Call(String type, int ring) {
    }

    static final List<Call> CALLS = new CopyOnWriteArrayList<>();

    private StandInStages() {
    }

    static void register() {
        for (String type : List.of(HierarchicalAllreducePass.REDUCE, HierarchicalAllreducePass.LEADERS_ALLREDUCE,
                HierarchicalAllreducePass.BROADCAST)) {
            if (OpRegistry.contains(type)) {
                continue;
            }
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
    }
}
