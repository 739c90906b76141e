package org.fleet4j.strategy;

import org.fleet4j.strategy.schema.StrategySchema;

/** The gradient_merge_configs group of a {@link DistributedStrategy}: gradient merge settings (used when gradient_merge is on). Setters write through to the strategy. */
public final class GradientMergeConfigs {
    private final DistributedStrategy strategy;

    GradientMergeConfigs(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** Steps whose gradients are merged into one update. */
    public GradientMergeConfigs kSteps(int value) {
        strategy.set(StrategySchema.GRADIENT_MERGE_K_STEPS, value);
        return this;
    }

    public int kSteps() {
        return strategy.get(StrategySchema.GRADIENT_MERGE_K_STEPS);
    }

    /** Average the merged gradients (false: sum them). */
    public GradientMergeConfigs avg(boolean value) {
        strategy.set(StrategySchema.GRADIENT_MERGE_AVG, value);
        return this;
    }

    public boolean avg() {
        return strategy.get(StrategySchema.GRADIENT_MERGE_AVG);
    }
}
