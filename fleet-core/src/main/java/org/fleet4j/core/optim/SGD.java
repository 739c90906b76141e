package org.fleet4j.core.optim;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ops.LrSchedule;

/** Plain stochastic gradient descent, optionally with L2 weight decay. */
public final class SGD extends Optimizer {
    private final float weightDecay;

    public SGD(double lr) {
        this(LrSchedule.constant(lr), 0f);
    }

    public SGD(LrSchedule schedule, float weightDecay) {
        super(schedule);
        this.weightDecay = weightDecay;
    }

    @Override
    public String name() {
        return "sgd";
    }

    @Override
    protected void appendUpdate(Updates u, ParamGrad pg, String lr) {
        u.block().appendOp("sgd",
                Map.of("Param", List.of(pg.param()), "Grad", List.of(pg.grad()), "LearningRate", List.of(lr)),
                Map.of("ParamOut", List.of(pg.param())), Map.of("weight_decay", weightDecay));
    }
}
