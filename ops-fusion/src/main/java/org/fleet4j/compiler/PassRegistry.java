package org.fleet4j.compiler;

import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.KnobUse.only;
import static org.fleet4j.strategy.schema.StrategySchema.AMP;
import static org.fleet4j.strategy.schema.StrategySchema.AMP_CUSTOM_BLACK_LIST;
import static org.fleet4j.strategy.schema.StrategySchema.AMP_CUSTOM_WHITE_LIST;
import static org.fleet4j.strategy.schema.StrategySchema.AMP_DECR_EVERY_N_NAN_OR_INF;
import static org.fleet4j.strategy.schema.StrategySchema.AMP_DECR_RATIO;
import static org.fleet4j.strategy.schema.StrategySchema.AMP_DTYPE;
import static org.fleet4j.strategy.schema.StrategySchema.AMP_INCR_EVERY_N_STEPS;
import static org.fleet4j.strategy.schema.StrategySchema.AMP_INCR_RATIO;
import static org.fleet4j.strategy.schema.StrategySchema.AMP_INIT_LOSS_SCALING;
import static org.fleet4j.strategy.schema.StrategySchema.AMP_USE_DYNAMIC_LOSS_SCALING;
import static org.fleet4j.strategy.schema.StrategySchema.BUILD_ENABLE_INPLACE;
import static org.fleet4j.strategy.schema.StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS;
import static org.fleet4j.strategy.schema.StrategySchema.BUILD_FUSE_BN_ACT_OPS;
import static org.fleet4j.strategy.schema.StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS;
import static org.fleet4j.strategy.schema.StrategySchema.FIND_UNUSED_PARAMETERS;
import static org.fleet4j.strategy.schema.StrategySchema.FP16_ALLREDUCE;
import static org.fleet4j.strategy.schema.StrategySchema.FUSE_ALL_REDUCE_OPS;
import static org.fleet4j.strategy.schema.StrategySchema.FUSE_GRAD_SIZE_IN_MB;
import static org.fleet4j.strategy.schema.StrategySchema.FUSE_GRAD_SIZE_IN_TFLOPS;
import static org.fleet4j.strategy.schema.StrategySchema.GRADIENT_MERGE;
import static org.fleet4j.strategy.schema.StrategySchema.GRADIENT_MERGE_AVG;
import static org.fleet4j.strategy.schema.StrategySchema.GRADIENT_MERGE_K_STEPS;
import static org.fleet4j.strategy.schema.StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS;
import static org.fleet4j.strategy.schema.StrategySchema.LAST_COMM_GROUP_SIZE_MB;
import static org.fleet4j.strategy.schema.StrategySchema.NCCL_COMM_NUM;
import static org.fleet4j.strategy.schema.StrategySchema.SYNC_BATCH_NORM;
import static org.fleet4j.strategy.schema.StrategySchema.SYNC_NCCL_ALLREDUCE;
import static org.fleet4j.strategy.schema.StrategySchema.USE_HIERARCHICAL_ALLREDUCE;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.schema.KnobUse;

/**
 * Passes by name, each with the strategy knobs it reads (its switch and its settings) and a factory that makes it from
 * a {@link PassContext}. The knobs of every registered pass are what the compiler declares it honours
 * ({@link PassKnobs}).
 */
public final class PassRegistry {
    private record Entry(List<KnobUse> knobs, Function<PassContext, Pass> factory) {
    }

    private static final Map<String, Entry> PASSES = new LinkedHashMap<>();

    // The knobs each pass reads, its switch first. Declared here rather than on the pass classes so that listing them
    // (the dry run's "in effect" column) loads no pass and registers no fused op.
    static {
        register(FuseElewiseAddActPass.NAME, List.of(any(BUILD_FUSE_ELEWISE_ADD_ACT_OPS)), c -> new FuseElewiseAddActPass());
        register(FuseBnActPass.NAME, List.of(any(BUILD_FUSE_BN_ACT_OPS)), c -> new FuseBnActPass());
        register(FindUnusedParametersPass.NAME, List.of(any(FIND_UNUSED_PARAMETERS)), c -> new FindUnusedParametersPass());
        register(GradientMergePass.NAME, List.of(any(GRADIENT_MERGE), any(GRADIENT_MERGE_K_STEPS), any(GRADIENT_MERGE_AVG)),
                GradientMergePass::of);
        register(FuseAllReducePass.NAME, List.of(any(FUSE_ALL_REDUCE_OPS), any(FUSE_GRAD_SIZE_IN_MB),
                any(FUSE_GRAD_SIZE_IN_TFLOPS), any(LAST_COMM_GROUP_SIZE_MB), any(NCCL_COMM_NUM)), FuseAllReducePass::of);
        register(Fp16AllreducePass.NAME, List.of(any(FP16_ALLREDUCE)), c -> new Fp16AllreducePass());
        register(HierarchicalAllreducePass.NAME, List.of(any(USE_HIERARCHICAL_ALLREDUCE),
                any(HIERARCHICAL_ALLREDUCE_INTER_NRANKS), any(NCCL_COMM_NUM), any(SYNC_NCCL_ALLREDUCE)),
                HierarchicalAllreducePass::of);
        register(SyncBatchNormPass.NAME, List.of(any(SYNC_BATCH_NORM)), c -> new SyncBatchNormPass());
        register(FuseAllOptimizerPass.NAME, List.of(any(BUILD_FUSE_ALL_OPTIMIZER_OPS)), c -> new FuseAllOptimizerPass());
        register(InplacePass.NAME, List.of(any(BUILD_ENABLE_INPLACE)), c -> new InplacePass());
        register(AmpPass.NAME, List.of(any(AMP), only(AMP_DTYPE, "bfloat16"), any(AMP_INIT_LOSS_SCALING),
                any(AMP_INCR_EVERY_N_STEPS), any(AMP_DECR_EVERY_N_NAN_OR_INF), any(AMP_INCR_RATIO), any(AMP_DECR_RATIO),
                any(AMP_USE_DYNAMIC_LOSS_SCALING), any(AMP_CUSTOM_WHITE_LIST), any(AMP_CUSTOM_BLACK_LIST)), AmpPass::of);
        register(OverlapAllreducePass.NAME, List.of(any(SYNC_NCCL_ALLREDUCE)), c -> new OverlapAllreducePass());
    }

    private PassRegistry() {
    }

    /** Registers a pass that reads {@code knobs} (its switch first) and is made by {@code factory}. */
    public static synchronized void register(String name, List<KnobUse> knobs, Function<PassContext, Pass> factory) {
        PASSES.put(name, new Entry(List.copyOf(knobs), factory));
    }

    public static synchronized Set<String> names() {
        return Set.copyOf(PASSES.keySet());
    }

    /** The knobs the pass of this name declares it reads. */
    public static synchronized List<KnobUse> knobs(String name) {
        return entry(name).knobs();
    }

    /** The knobs of every registered pass, in registration order. */
    public static synchronized List<KnobUse> knobs() {
        List<KnobUse> all = new ArrayList<>();
        PASSES.values().forEach(e -> all.addAll(e.knobs()));
        return all;
    }

    /** The pass of this name made from the context; fails naming the known passes. */
    public static synchronized Pass create(String name, PassContext context) {
        return entry(name).factory().apply(context);
    }

    /** As {@link #create(String, PassContext)}, on the strategy's own ring layout. */
    public static Pass create(String name, EffectiveStrategy strategy) {
        return create(name, PassContext.of(strategy));
    }

    private static Entry entry(String name) {
        Entry e = PASSES.get(name);
        if (e == null) {
            throw new IllegalArgumentException("no compiler pass named '" + name + "' (passes: " + PASSES.keySet() + ")");
        }
        return e;
    }
}
