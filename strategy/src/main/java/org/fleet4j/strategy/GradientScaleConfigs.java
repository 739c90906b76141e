package org.fleet4j.strategy;

import org.fleet4j.strategy.schema.StrategySchema;

/** The gradient_scale_configs group of a {@link DistributedStrategy}: how gradients of all workers are combined. Setters write through to the strategy. */
public final class GradientScaleConfigs {
    private final DistributedStrategy strategy;

    GradientScaleConfigs(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** How gradients from all workers combine: avg divides their sum by the world size, sum does not. */
    public GradientScaleConfigs scaleStrategy(ScaleStrategy value) {
        strategy.set(StrategySchema.GRADIENT_SCALE_STRATEGY, value.spelling());
        return this;
    }

    public ScaleStrategy scaleStrategy() {
        return ScaleStrategy.of(strategy.get(StrategySchema.GRADIENT_SCALE_STRATEGY));
    }
}
