package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * {@code conditional_begin(Cond)} and {@code conditional_end}: the Executor runs the ops between them only when Cond
 * is non-zero (their kernels do nothing; the executor skips). {@code merge_step}: counts micro-steps in a persistable
 * int64 counter and sets Cond to 1 on every k-th.
 */
@AutoService(OpLibrary.class)
public final class ControlOps implements OpLibrary {
    public static final String BEGIN = "conditional_begin";
    public static final String END = "conditional_end";
    public static final String MERGE_STEP = "merge_step";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(BEGIN).in("Cond")
                .shape(ctx -> {
                    if (ctx.dtype("Cond") != DType.I64) {
                        throw ctx.fail("Cond must be int64");
                    }
                })
                .kernel(op -> a -> {
                }).build());
        specs.add(OpSpec.builder(END).kernel(op -> a -> {
        }).build());
        specs.add(OpSpec.builder(MERGE_STEP).in("Step").out("StepOut", "Cond")
                .attr("k_steps", AttrType.INT, null)
                .shape(ctx -> {
                    if (ctx.op().intAttr("k_steps") < 1) {
                        throw ctx.fail("k_steps must be at least 1, is " + ctx.op().intAttr("k_steps"));
                    }
                    ctx.set("StepOut", DType.I64, 1);
                    ctx.set("Cond", DType.I64, 1);
                })
                .kernel(op -> {
                    int k = op.intAttr("k_steps");
                    return a -> {
                        Tensor step = a.in("Step");
                        if (step.dtype() != DType.I64) {
                            throw new IrException(MERGE_STEP + ": Step (" + a.op().in("Step") + ") must be int64");
                        }
                        long s = step.getLong(0) + 1;
                        step.setLong(0, s);
                        a.setOut("StepOut", step);
                        a.out("Cond", DType.I64, 1).setLong(0, s % k == 0 ? 1 : 0);
                    };
                }).build());
        return specs;
    }
}
