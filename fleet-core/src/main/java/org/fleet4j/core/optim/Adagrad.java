package org.fleet4j.core.optim;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ops.LrSchedule;

/** Adagrad (Duchi et al.): each element's step shrinks with the root of its summed squared gradients. */
public final class Adagrad extends Optimizer {
    private final float epsilon;

    public Adagrad(double lr) {
        this(LrSchedule.constant(lr), 1e-6f);
    }

    public Adagrad(LrSchedule schedule, float epsilon) {
        super(schedule);
        this.epsilon = epsilon;
    }

    @Override
    public String name() {
        return "adagrad";
    }

    @Override
    protected void appendUpdate(Updates u, ParamGrad pg, String lr) {
        String m = u.like(pg.param(), "moment_0").name();
        u.block().appendOp("adagrad",
                Map.of("Param", List.of(pg.param()), "Grad", List.of(pg.grad()), "Moment", List.of(m),
                        "LearningRate", List.of(lr)),
                Map.of("ParamOut", List.of(pg.param()), "MomentOut", List.of(m)),
                Map.of("epsilon", epsilon));
    }
}
