package org.fleet4j.strategy;

import java.util.Arrays;
import java.util.List;
import org.fleet4j.strategy.schema.StrategySchema;

/** The dgc_configs group of a {@link DistributedStrategy}: deep gradient compression settings (used when dgc is on). Setters write through to the strategy. */
public final class DgcConfigs {
    private final DistributedStrategy strategy;

    DgcConfigs(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** Step at which compression starts. */
    public DgcConfigs rampupBeginStep(int value) {
        strategy.set(StrategySchema.DGC_RAMPUP_BEGIN_STEP, value);
        return this;
    }

    public int rampupBeginStep() {
        return strategy.get(StrategySchema.DGC_RAMPUP_BEGIN_STEP);
    }

    /** Steps over which sparsity ramps up through dgc_configs.sparsity. */
    public DgcConfigs rampupStep(int value) {
        strategy.set(StrategySchema.DGC_RAMPUP_STEP, value);
        return this;
    }

    public int rampupStep() {
        return strategy.get(StrategySchema.DGC_RAMPUP_STEP);
    }

    /** Sparsity at each stage of the ramp-up, each in [0, 1); empty means 0.999 throughout. */
    public DgcConfigs sparsity(double... values) {
        strategy.set(StrategySchema.DGC_SPARSITY, Arrays.stream(values).boxed().toList());
        return this;
    }

    public DgcConfigs sparsity(List<Double> values) {
        strategy.set(StrategySchema.DGC_SPARSITY, List.copyOf(values));
        return this;
    }

    public List<Double> sparsity() {
        return strategy.get(StrategySchema.DGC_SPARSITY);
    }
}
