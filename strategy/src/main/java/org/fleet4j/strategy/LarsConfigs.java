package org.fleet4j.strategy;

import java.util.List;
import org.fleet4j.strategy.schema.StrategySchema;

/** The lars_configs group of a {@link DistributedStrategy}: LARS optimizer settings (used when lars is on). Setters write through to the strategy. */
public final class LarsConfigs {
    private final DistributedStrategy strategy;

    LarsConfigs(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** Trust coefficient of LARS. */
    public LarsConfigs larsCoeff(double value) {
        strategy.set(StrategySchema.LARS_COEFF, value);
        return this;
    }

    public double larsCoeff() {
        return strategy.get(StrategySchema.LARS_COEFF);
    }

    /** Weight decay of LARS. */
    public LarsConfigs larsWeightDecay(double value) {
        strategy.set(StrategySchema.LARS_WEIGHT_DECAY, value);
        return this;
    }

    public double larsWeightDecay() {
        return strategy.get(StrategySchema.LARS_WEIGHT_DECAY);
    }

    /** Added to the denominator of the local learning rate. */
    public LarsConfigs epsilon(double value) {
        strategy.set(StrategySchema.LARS_EPSILON, value);
        return this;
    }

    public double epsilon() {
        return strategy.get(StrategySchema.LARS_EPSILON);
    }

    /** Parameter name fragments exempt from weight decay. */
    public LarsConfigs excludeFromWeightDecay(String... values) {
        strategy.set(StrategySchema.LARS_EXCLUDE_FROM_WEIGHT_DECAY, List.of(values));
        return this;
    }

    public LarsConfigs excludeFromWeightDecay(List<String> values) {
        strategy.set(StrategySchema.LARS_EXCLUDE_FROM_WEIGHT_DECAY, List.copyOf(values));
        return this;
    }

    public List<String> excludeFromWeightDecay() {
        return strategy.get(StrategySchema.LARS_EXCLUDE_FROM_WEIGHT_DECAY);
    }
}
