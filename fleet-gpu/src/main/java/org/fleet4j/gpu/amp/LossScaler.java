package org.fleet4j.gpu.amp;

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
    private double scale;
    private int goodSteps;
    private int badSteps;
    private long skippedSteps;

    public LossScaler(AmpConfig config) {
        this.config = config;
        this.scale = config.initLossScaling();
    }

    /** What the loss is multiplied by this step. */
    public double scale() {
        return scale;
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
        float inverse = (float) (1.0 / scale);
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
            goodSteps = 0;
            badSteps++;
            if (config.useDynamicLossScaling() && badSteps == config.decrEveryNNanOrInf()) {
                scale = Math.max(1.0, scale * config.decrRatio());
                badSteps = 0;
            }
            return false;
        }
        badSteps = 0;
        goodSteps++;
        if (config.useDynamicLossScaling() && goodSteps == config.incrEveryNSteps()) {
            double grown = scale * config.incrRatio();
            if (Double.isFinite(grown) && grown <= Float.MAX_VALUE) {
                scale = grown;
            }
            goodSteps = 0;
        }
        return true;
    }
}
