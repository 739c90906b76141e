package org.fleet4j.core.optim;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ops.LrSchedule;

/** SGD with momentum (v = mu v + g; p -= lr v), or Nesterov's variant (p -= lr (g + mu v)). */
public final class Momentum extends Optimizer {
    private final float mu;
    private final boolean nesterov;
    private final float weightDecay;

    public Momentum(double lr, float mu) {
        this(LrSchedule.constant(lr), mu, false, 0f);
    }

    public Momentum(LrSchedule schedule, float mu, boolean nesterov, float weightDecay) {
        super(schedule);
        this.mu = mu;
        this.nesterov = nesterov;
        this.weightDecay = weightDecay;
    }

    @Override
    public String name() {
        return nesterov ? "momentum (nesterov)" : "momentum";
    }

    @Override
    protected void appendUpdate(Updates u, ParamGrad pg, String lr) {
        String v = u.like(pg.param(), "velocity_0").name();
        u.block().appendOp("momentum",
                Map.of("Param", List.of(pg.param()), "Grad", List.of(pg.grad()), "Velocity", List.of(v),
                        "LearningRate", List.of(lr)),
                Map.of("ParamOut", List.of(pg.param()), "VelocityOut", List.of(v)),
                Map.of("mu", mu, "use_nesterov", nesterov, "weight_decay", weightDecay));
    }
}
