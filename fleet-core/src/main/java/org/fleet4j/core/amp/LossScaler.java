package org.fleet4j.core.amp;

import java.util.List;
import org.fleet4j.core.tensor.Tensor;

/**
 * Dynamic loss scaling for fp16 training, as Paddle's {@code update_loss_scaling}: the loss is multiplied by the
 * scale before backward so small gradients survive fp16; gradients are divided by it again before the optimizer. A
 * step whose gradients hold inf or nan is skipped; after {@code decr_every_n_nan_or_inf} such steps in a row the
 * scale shrinks (never below 1), after {@code incr_every_n_steps} finite steps in a row it grows (unless that would
 * overflow).
 */
public final class LossScaler {
    private final AmpConfig config;
    private final LossScaleRule rule;
    private LossScaleRule.State state;
    private long skippedSteps;

    public LossScaler(AmpConfig config) {
        this.config = config;
        this.rule = LossScaleRule.of(config);
        this.state = new LossScaleRule.State(config.initLossScaling(), 0, 0);
    }

    /** What the loss is multiplied by this step. */
    public double scale() {
        return state.scale();
    }

    public long skippedSteps() {
        return skippedSteps;
    }

    /**
     * Divides the f32 gradients by the scale in place and reports whether any element is inf or nan (then their
     * values are meaningless and the step must be skipped). The device version is the {@code check_finite_and_unscale}
     * kernel.
     */
    public boolean unscale(List<Tensor> grads) {
        float inverse = (float) (1.0 / state.scale());
        boolean nonFinite = false;
        for (Tensor g : grads) {
            for (long i = 0, n = g.numel(); i < n; i++) {
                float v = g.getFloat(i) * inverse;
                nonFinite |= !Float.isFinite(v);
                g.setFloat(i, v);
            }
        }
        return nonFinite;
    }

    /** Advances the state after a step's gradients were checked; returns whether the optimizer may apply them. */
    public boolean update(boolean foundInfOrNan) {
        if (foundInfOrNan) {
            skippedSteps++;
        }
        if (config.useDynamicLossScaling()) {
            state = rule.next(state, foundInfOrNan);
        }
        return !foundInfOrNan;
    }
}
