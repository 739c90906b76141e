package org.fleet4j.strategy;

import java.util.List;
import org.fleet4j.strategy.schema.StrategySchema;

/** The lamb_configs group of a {@link DistributedStrategy}: LAMB optimizer settings (used when lamb is on). Setters write through to the strategy. */
public final class LambConfigs {
    private final DistributedStrategy strategy;

    LambConfigs(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** Weight decay of LAMB. */
    public LambConfigs lambWeightDecay(double value) {
        strategy.set(StrategySchema.LAMB_WEIGHT_DECAY, value);
        return this;
    }

    public double lambWeightDecay() {
        return strategy.get(StrategySchema.LAMB_WEIGHT_DECAY);
    }

    /** Parameter name fragments exempt from weight decay. */
    public LambConfigs excludeFromWeightDecay(String... values) {
        strategy.set(StrategySchema.LAMB_EXCLUDE_FROM_WEIGHT_DECAY, List.of(values));
        return this;
    }

    public LambConfigs excludeFromWeightDecay(List<String> values) {
        strategy.set(StrategySchema.LAMB_EXCLUDE_FROM_WEIGHT_DECAY, List.copyOf(values));
        return this;
    }

    public List<String> excludeFromWeightDecay() {
        return strategy.get(StrategySchema.LAMB_EXCLUDE_FROM_WEIGHT_DECAY);
    }
}
