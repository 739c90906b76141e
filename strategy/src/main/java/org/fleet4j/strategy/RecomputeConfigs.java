package org.fleet4j.strategy;

import java.util.List;
import org.fleet4j.strategy.schema.StrategySchema;

/** The recompute_configs group of a {@link DistributedStrategy}: recompute settings (used when recompute is on). Setters write through to the strategy. */
public final class RecomputeConfigs {
    private final DistributedStrategy strategy;

    RecomputeConfigs(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** Names of the variables kept in memory; segments between them are recomputed. */
    public RecomputeConfigs checkpoints(String... values) {
        strategy.set(StrategySchema.RECOMPUTE_CHECKPOINTS, List.of(values));
        return this;
    }

    public RecomputeConfigs checkpoints(List<String> values) {
        strategy.set(StrategySchema.RECOMPUTE_CHECKPOINTS, List.copyOf(values));
        return this;
    }

    public List<String> checkpoints() {
        return strategy.get(StrategySchema.RECOMPUTE_CHECKPOINTS);
    }
}
