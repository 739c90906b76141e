package org.fleet4j.compiler;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.fleet4j.strategy.EffectiveStrategy;

/** Passes by name; each is made from the effective strategy, which supplies its settings (bucket sizes, rings). */
public final class PassRegistry {
    private static final Map<String, Function<EffectiveStrategy, Pass>> FACTORIES = new LinkedHashMap<>();

    static {
        register(FuseElewiseAddActPass.NAME, s -> new FuseElewiseAddActPass());
        register(FuseBnActPass.NAME, s -> new FuseBnActPass());
        register(FindUnusedParametersPass.NAME, s -> new FindUnusedParametersPass());
        register(GradientMergePass.NAME, GradientMergePass::fromStrategy);
        register(FuseAllReducePass.NAME, FuseAllReducePass::fromStrategy);
        register(Fp16AllreducePass.NAME, s -> new Fp16AllreducePass());
        register(HierarchicalAllreducePass.NAME, HierarchicalAllreducePass::fromStrategy);
        register(SyncBatchNormPass.NAME, s -> new SyncBatchNormPass());
        register(FuseAllOptimizerPass.NAME, s -> new FuseAllOptimizerPass());
        register(InplacePass.NAME, s -> new InplacePass());
        register(AmpPass.NAME, AmpPass::fromStrategy);
        register(OverlapAllreducePass.NAME, s -> new OverlapAllreducePass());
    }

    private PassRegistry() {
    }

    public static synchronized void register(String name, Function<EffectiveStrategy, Pass> factory) {
        FACTORIES.put(name, factory);
    }

    public static synchronized Set<String> names() {
        return Set.copyOf(FACTORIES.keySet());
    }

    /** The pass of this name configured from the strategy; fails naming the known passes. */
    public static synchronized Pass create(String name, EffectiveStrategy strategy) {
        Function<EffectiveStrategy, Pass> f = FACTORIES.get(name);
        if (f == null) {
            throw new IllegalArgumentException("no compiler pass named '" + name + "' (passes: " + FACTORIES.keySet() + ")");
        }
        return f.apply(strategy);
    }
}
