package org.fleet4j.strategy;

import org.fleet4j.strategy.schema.StrategySchema;

/** The localsgd_configs group of a {@link DistributedStrategy}: local SGD settings (used when localsgd is on). Setters write through to the strategy. */
public final class LocalSgdConfigs {
    private final DistributedStrategy strategy;

    LocalSgdConfigs(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** Steps between parameter averages. */
    public LocalSgdConfigs kSteps(int value) {
        strategy.set(StrategySchema.LOCALSGD_K_STEPS, value);
        return this;
    }

    public int kSteps() {
        return strategy.get(StrategySchema.LOCALSGD_K_STEPS);
    }

    /** Step from which local SGD starts (plain data parallel before). */
    public LocalSgdConfigs beginStep(int value) {
        strategy.set(StrategySchema.LOCALSGD_BEGIN_STEP, value);
        return this;
    }

    public int beginStep() {
        return strategy.get(StrategySchema.LOCALSGD_BEGIN_STEP);
    }
}
