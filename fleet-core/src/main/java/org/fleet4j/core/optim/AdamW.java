package org.fleet4j.core.optim;

import java.util.Map;
import org.fleet4j.core.ops.LrSchedule;

/** Adam with decoupled weight decay: p *= 1 - lr * weightDecay before each Adam step. */
public final class AdamW extends Adam {
    private final float weightDecay;

    public AdamW(double lr, float weightDecay) {
        this(LrSchedule.constant(lr), 0.9f, 0.999f, 1e-8f, weightDecay);
    }

    public AdamW(LrSchedule schedule, float beta1, float beta2, float epsilon, float weightDecay) {
        super(schedule, beta1, beta2, epsilon, false);
        this.weightDecay = weightDecay;
    }

    @Override
    public String name() {
        return "adamw";
    }

    @Override
    protected String opType() {
        return "adamw";
    }

    @Override
    protected void addAttrs(Map<String, Object> attrs) {
        attrs.put("coeff", weightDecay);
    }
}
