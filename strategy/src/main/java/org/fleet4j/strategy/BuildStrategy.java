package org.fleet4j.strategy;

import org.fleet4j.strategy.schema.StrategySchema;

/** The build_strategy group of a {@link DistributedStrategy}: program rewrites chosen when compiling. Setters write through to the strategy. */
public final class BuildStrategy {
    private final DistributedStrategy strategy;

    BuildStrategy(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** Run ops in program order instead of by dependencies. */
    public BuildStrategy enableSequentialExecution(boolean value) {
        strategy.set(StrategySchema.BUILD_ENABLE_SEQUENTIAL_EXECUTION, value);
        return this;
    }

    public boolean enableSequentialExecution() {
        return strategy.get(StrategySchema.BUILD_ENABLE_SEQUENTIAL_EXECUTION);
    }

    /** Fuse elementwise_add followed by an activation into one op. */
    public BuildStrategy fuseElewiseAddActOps(boolean value) {
        strategy.set(StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS, value);
        return this;
    }

    public boolean fuseElewiseAddActOps() {
        return strategy.get(StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS);
    }

    /** Fuse batch_norm followed by an activation into one op. */
    public BuildStrategy fuseBnActOps(boolean value) {
        strategy.set(StrategySchema.BUILD_FUSE_BN_ACT_OPS, value);
        return this;
    }

    public boolean fuseBnActOps() {
        return strategy.get(StrategySchema.BUILD_FUSE_BN_ACT_OPS);
    }

    /** Fuse relu followed by depthwise_conv into one op. */
    public BuildStrategy fuseReluDepthwiseConv(boolean value) {
        strategy.set(StrategySchema.BUILD_FUSE_RELU_DEPTHWISE_CONV, value);
        return this;
    }

    public boolean fuseReluDepthwiseConv() {
        return strategy.get(StrategySchema.BUILD_FUSE_RELU_DEPTHWISE_CONV);
    }

    /** Fuse the broadcasts of parameters (reduce mode) into one. */
    public BuildStrategy fuseBroadcastOps(boolean value) {
        strategy.set(StrategySchema.BUILD_FUSE_BROADCAST_OPS, value);
        return this;
    }

    public boolean fuseBroadcastOps() {
        return strategy.get(StrategySchema.BUILD_FUSE_BROADCAST_OPS);
    }

    /** Fuse the optimizer updates of all parameters into one op per optimizer type. */
    public BuildStrategy fuseAllOptimizerOps(boolean value) {
        strategy.set(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS, value);
        return this;
    }

    public boolean fuseAllOptimizerOps() {
        return strategy.get(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS);
    }

    /** Let ops write their output over an input that is no longer needed. */
    public BuildStrategy enableInplace(boolean value) {
        strategy.set(StrategySchema.BUILD_ENABLE_INPLACE, value);
        return this;
    }

    public boolean enableInplace() {
        return strategy.get(StrategySchema.BUILD_ENABLE_INPLACE);
    }

    /** Order allreduce and optimizer ops by backward dependencies so communication overlaps compute. */
    public BuildStrategy enableBackwardOptimizerOpDeps(boolean value) {
        strategy.set(StrategySchema.BUILD_ENABLE_BACKWARD_OPTIMIZER_OP_DEPS, value);
        return this;
    }

    public boolean enableBackwardOptimizerOpDeps() {
        return strategy.get(StrategySchema.BUILD_ENABLE_BACKWARD_OPTIMIZER_OP_DEPS);
    }

    /** Cache each op's runtime context between steps. */
    public BuildStrategy cacheRuntimeContext(boolean value) {
        strategy.set(StrategySchema.BUILD_CACHE_RUNTIME_CONTEXT, value);
        return this;
    }

    public boolean cacheRuntimeContext() {
        return strategy.get(StrategySchema.BUILD_CACHE_RUNTIME_CONTEXT);
    }
}
