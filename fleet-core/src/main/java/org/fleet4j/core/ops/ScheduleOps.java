package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/** The step counter (increment) and the learning rate computed from it (lr_schedule) inside the program. */
@AutoService(OpLibrary.class)
public final class ScheduleOps implements OpLibrary {
    public static final String INCREMENT = "increment";
    public static final String LR_SCHEDULE = "lr_schedule";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(INCREMENT)
                .in("X").out("Out")
                .attr("step", AttrType.FLOAT, 1f)
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> {
                    float step = op.floatAttr("step");
                    return a -> {
                        Tensor x = a.in("X");
                        Tensor out = a.outLike("Out", x);
                        for (long i = 0; i < x.numel(); i++) {
                            out.setDouble(i, x.getDouble(i) + step);
                        }
                    };
                })
                .build());
        specs.add(OpSpec.builder(LR_SCHEDULE)
                .in("Step").out("LearningRate")
                .attr("base_lr", AttrType.FLOAT, null)
                .attr("decay", AttrType.STRING, "constant")
                .attr("step_size", AttrType.INT, 1)
                .attr("gamma", AttrType.FLOAT, 0.1f)
                .attr("total_steps", AttrType.INT, 0)
                .attr("min_lr", AttrType.FLOAT, 0f)
                .attr("warmup_steps", AttrType.INT, 0)
                .attr("warmup_start_lr", AttrType.FLOAT, 0f)
                .shape(ctx -> {
                    String d = ctx.op().stringAttr("decay");
                    if (!d.equals("constant") && !d.equals("step") && !d.equals("cosine")) {
                        throw ctx.fail("decay '" + d + "' is not one of constant, step, cosine");
                    }
                    if (d.equals("step") && ctx.op().intAttr("step_size") < 1) {
                        throw ctx.fail("step decay needs step_size >= 1");
                    }
                    if (d.equals("cosine") && ctx.op().intAttr("total_steps") <= ctx.op().intAttr("warmup_steps")) {
                        throw ctx.fail("cosine decay needs total_steps > warmup_steps");
                    }
                    ctx.set("LearningRate", DType.F32, 1);
                })
                .kernel(op -> {
                    LrSchedule s = LrSchedule.of(op);
                    return a -> a.out("LearningRate", DType.F32, 1).setFloat(0, (float) s.at(a.in("Step").getLong(0)));
                })
                .build());
        return specs;
    }
}
