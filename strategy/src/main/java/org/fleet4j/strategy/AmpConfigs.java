package org.fleet4j.strategy;

import java.util.List;
import org.fleet4j.strategy.schema.StrategySchema;

/** The amp_configs group of a {@link DistributedStrategy}: automatic mixed precision settings (used when amp is on). Setters write through to the strategy. */
public final class AmpConfigs {
    private final DistributedStrategy strategy;

    AmpConfigs(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** Initial loss scaling factor. */
    public AmpConfigs initLossScaling(double value) {
        strategy.set(StrategySchema.AMP_INIT_LOSS_SCALING, value);
        return this;
    }

    public double initLossScaling() {
        return strategy.get(StrategySchema.AMP_INIT_LOSS_SCALING);
    }

    /** Raise the loss scaling after this many steps without inf or nan. */
    public AmpConfigs incrEveryNSteps(int value) {
        strategy.set(StrategySchema.AMP_INCR_EVERY_N_STEPS, value);
        return this;
    }

    public int incrEveryNSteps() {
        return strategy.get(StrategySchema.AMP_INCR_EVERY_N_STEPS);
    }

    /** Lower the loss scaling after this many steps with inf or nan. */
    public AmpConfigs decrEveryNNanOrInf(int value) {
        strategy.set(StrategySchema.AMP_DECR_EVERY_N_NAN_OR_INF, value);
        return this;
    }

    public int decrEveryNNanOrInf() {
        return strategy.get(StrategySchema.AMP_DECR_EVERY_N_NAN_OR_INF);
    }

    /** Factor by which the loss scaling grows. */
    public AmpConfigs incrRatio(double value) {
        strategy.set(StrategySchema.AMP_INCR_RATIO, value);
        return this;
    }

    public double incrRatio() {
        return strategy.get(StrategySchema.AMP_INCR_RATIO);
    }

    /** Factor by which the loss scaling shrinks. */
    public AmpConfigs decrRatio(double value) {
        strategy.set(StrategySchema.AMP_DECR_RATIO, value);
        return this;
    }

    public double decrRatio() {
        return strategy.get(StrategySchema.AMP_DECR_RATIO);
    }

    /** Adjust the loss scaling as training goes (false: keep init_loss_scaling). */
    public AmpConfigs useDynamicLossScaling(boolean value) {
        strategy.set(StrategySchema.AMP_USE_DYNAMIC_LOSS_SCALING, value);
        return this;
    }

    public boolean useDynamicLossScaling() {
        return strategy.get(StrategySchema.AMP_USE_DYNAMIC_LOSS_SCALING);
    }

    /** Op types to run in half precision in addition to the built-in list. */
    public AmpConfigs customWhiteList(String... values) {
        strategy.set(StrategySchema.AMP_CUSTOM_WHITE_LIST, List.of(values));
        return this;
    }

    public AmpConfigs customWhiteList(List<String> values) {
        strategy.set(StrategySchema.AMP_CUSTOM_WHITE_LIST, List.copyOf(values));
        return this;
    }

    public List<String> customWhiteList() {
        return strategy.get(StrategySchema.AMP_CUSTOM_WHITE_LIST);
    }

    /** Op types to keep in single precision. */
    public AmpConfigs customBlackList(String... values) {
        strategy.set(StrategySchema.AMP_CUSTOM_BLACK_LIST, List.of(values));
        return this;
    }

    public AmpConfigs customBlackList(List<String> values) {
        strategy.set(StrategySchema.AMP_CUSTOM_BLACK_LIST, List.copyOf(values));
        return this;
    }

    public List<String> customBlackList() {
        return strategy.get(StrategySchema.AMP_CUSTOM_BLACK_LIST);
    }

    /** Keep parameters themselves in half precision (pure fp16), not only activations. */
    public AmpConfigs usePureFp16(boolean value) {
        strategy.set(StrategySchema.AMP_USE_PURE_FP16, value);
        return this;
    }

    public boolean usePureFp16() {
        return strategy.get(StrategySchema.AMP_USE_PURE_FP16);
    }

    /** The half precision white-listed ops compute in: "float16" or "bfloat16" (CPUs have bfloat16 only). */
    public AmpConfigs dtype(String value) {
        strategy.set(StrategySchema.AMP_DTYPE, value);
        return this;
    }

    public String dtype() {
        return strategy.get(StrategySchema.AMP_DTYPE);
    }
}
