package org.fleet4j.compiler;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ops.F32;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * A one-process stand-in for {@code c_allreduce}, same slots and attributes: "sum" doubles X in place,
 * as a world of two ranks with equal gradients would; "avg" leaves it. Every call is recorded (ring, floats), so
 * tests see how many collectives ran and on which rings.
 */
final class StandInAllreduce {
    record Call(int ring, long floats) {
    }

    static final List<Call> CALLS = new CopyOnWriteArrayList<>();

    private StandInAllreduce() {
    }

    private static boolean registered;

    /** Puts the stand-in in place of the real c_allreduce (which needs a job's rings), once. */
    static synchronized void register() {
        if (registered) {
            return;
        }
        registered = true;
        OpRegistry.register(OpSpec.builder(CollectiveOpTypes.ALLREDUCE).in("X").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("reduce", AttrType.STRING, "sum")
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> {
                    int ring = op.intAttr("ring_id");
                    boolean sum = op.stringAttr("reduce").equals("sum");
                    return a -> {
                        Tensor x = a.in("X");
                        CALLS.add(new Call(ring, x.numel()));
                        if (sum && x.dtype() == DType.F32) {
                            F32.scale(x.segment(), 2f, x.segment(), x.numel());
                        } else if (sum) {
                            for (long i = 0; i < x.numel(); i++) {
                                x.setFloat(i, 2f * x.getFloat(i));
                            }
                        }
                        a.setOut("Out", x);
                    };
                }).build());
    }
}
