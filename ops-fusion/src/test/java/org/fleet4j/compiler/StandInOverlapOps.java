package org.fleet4j.compiler;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * One-process stand-ins for {@code c_allreduce_start} and {@code c_wait}, same slots and attributes:
 * the start doubles X ("sum" of two equal ranks, as {@link StandInAllreduce}) on a thread of its own, element by
 * element, and returns at once with the future as its Work; the wait joins it. A reader that ran before the wait
 * would see a half-doubled tensor.
 */
final class StandInOverlapOps {
    private static final ExecutorService REDUCER = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "stand-in-allreduce");
        t.setDaemon(true);
        return t;
    });

    private StandInOverlapOps() {
    }

    private static boolean registered;

    /** Puts the stand-ins in place of the real ops (which need a job's rings), once. */
    static synchronized void register() {
        StandInAllreduce.register();
        if (registered) {
            return;
        }
        registered = true;
        OpRegistry.register(OpSpec.builder(CollectiveOpTypes.ALLREDUCE_START).in("X").out("Out", "Work")
                .attr("ring_id", AttrType.INT, 0).attr("reduce", AttrType.STRING, "sum")
                .shape(ctx -> {
                    ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
                    ctx.set("Work", DType.I64, 1);
                })
                .kernel(op -> {
                    boolean sum = op.stringAttr("reduce").equals("sum");
                    int ring = op.intAttr("ring_id");
                    return a -> {
                        Tensor x = a.in("X");
                        StandInAllreduce.CALLS.add(new StandInAllreduce.Call(ring, x.numel()));
                        a.setOut("Work", CompletableFuture.runAsync(() -> {
                            for (long i = 0; sum && i < x.numel(); i++) {
                                x.setFloat(i, 2f * x.getFloat(i));
                            }
                        }, REDUCER));
                        a.setOut("Out", x);
                    };
                }).build());
        OpRegistry.register(OpSpec.builder(CollectiveOpTypes.WAIT).in("X", "Work").out("Out")
                .attr("ring_id", AttrType.INT, 0)
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> a -> {
                    try {
                        ((CompletableFuture<?>) a.inValue("Work", 0)).get(30, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        throw new IllegalStateException("stand-in allreduce did not finish: " + e, e);
                    }
                    a.setOut("Out", a.in("X"));
                }).build());
    }
}
