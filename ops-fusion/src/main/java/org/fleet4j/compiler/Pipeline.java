package org.fleet4j.compiler;

import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.Program;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * An ordered list of passes. {@link #forStrategy} picks and orders them from the effective strategy: op fusions
 * first (they change which ops produce gradients), then gradient merge (it gates the gradients' consumers), then
 * gradient bucketing (it needs the final producers), then sync batch norm (its statistics' allreduces must not join a
 * gradient bucket), then the fused optimizer (it reads the bucketed gradients), and
 * buffer reuse last (it needs to know every reader of every var). amp comes before all of them: it derives backward
 * again from the scaled loss, so every later pass sees the final ops.
 */
public final class Pipeline {
    private final List<Pass> passes;

    private Pipeline(List<Pass> passes) {
        this.passes = List.copyOf(passes);
    }

    public static Pipeline of(Pass... passes) {
        return new Pipeline(List.of(passes));
    }

    /** The passes the context's strategy selects, each made from the context. */
    public static Pipeline forContext(PassContext context) {
        return new Pipeline(passNames(context).stream().map(n -> PassRegistry.create(n, context)).toList());
    }

    /** As {@link #forContext}, on the strategy's own ring layout. */
    public static Pipeline forStrategy(EffectiveStrategy strategy) {
        return forContext(PassContext.of(strategy));
    }

    /**
     * As {@link #forContext}, with the rings that Fleet opened ({@code rings}, which carries the hierarchical form it
     * read from the environment) in place of the strategy's own layout.
     */
    public static Pipeline forStrategy(EffectiveStrategy strategy, RingLayout rings) {
        return forContext(PassContext.of(strategy, rings));
    }

    /** The names of the passes {@link #forStrategy} runs, in order, without making them (nor loading their kernels). */
    public static List<String> passNames(EffectiveStrategy strategy) {
        return passNames(PassContext.of(strategy));
    }

    static List<String> passNames(PassContext context) {
        List<String> names = new ArrayList<>();
        if (context.knob(StrategySchema.AMP)) {
            names.add(AmpPass.NAME);
        }
        if (context.knob(StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS)) {
            names.add(FuseElewiseAddActPass.NAME);
        }
        if (context.knob(StrategySchema.BUILD_FUSE_BN_ACT_OPS)) {
            names.add(FuseBnActPass.NAME);
        }
        if (context.knob(StrategySchema.FIND_UNUSED_PARAMETERS)) {
            names.add(FindUnusedParametersPass.NAME);
        }
        if (context.knob(StrategySchema.GRADIENT_MERGE)) {
            names.add(GradientMergePass.NAME);
        }
        if (context.knob(StrategySchema.FUSE_ALL_REDUCE_OPS)) {
            names.add(FuseAllReducePass.NAME);
        }
        if (context.knob(StrategySchema.FP16_ALLREDUCE)) {
            names.add(Fp16AllreducePass.NAME);
        }
        if (context.knob(StrategySchema.USE_HIERARCHICAL_ALLREDUCE)) {
            names.add(HierarchicalAllreducePass.NAME);
        }
        if (context.knob(StrategySchema.SYNC_BATCH_NORM)) {
            names.add(SyncBatchNormPass.NAME);
        }
        if (context.knob(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS)) {
            names.add(FuseAllOptimizerPass.NAME);
        }
        if (context.knob(StrategySchema.BUILD_ENABLE_INPLACE)) {
            names.add(InplacePass.NAME);
        }
        if (!context.knob(StrategySchema.SYNC_NCCL_ALLREDUCE)) {
            names.add(OverlapAllreducePass.NAME);
        }
        return List.copyOf(names);
    }

    public List<Pass> passes() {
        return passes;
    }

    /** Runs every pass in order on a copy; the argument is left as it was. */
    public Compilation run(Program program) {
        List<PassReport> reports = new ArrayList<>();
        Program current = program;
        for (Pass pass : passes) {
            int before = current.globalBlock().ops().size();
            PassResult r = pass.apply(current);
            current = r.program();
            reports.add(new PassReport(pass.name(), before, current.globalBlock().ops().size(), r.notes()));
        }
        return new Compilation(current, reports);
    }

    /**
     * Compiles and writes the result back into {@code program} itself, for callers that hold on to the program object
     * (the distributed optimizer, the layers API). Returns the report.
     */
    public Compilation runInPlace(Program program) {
        Compilation c = run(program);
        if (c.program() != program) {
            ProgramEdits.replaceContents(program, c.program());
        }
        Program startup = c.program().startupProgram();
        if (startup != program.startupProgram()) {
            // a pass that adds persistable state (gradient merge) returns a new startup program too
            ProgramEdits.replaceContents(program.startupProgram(), startup);
        }
        return new Compilation(program, c.reports());
    }
}
