package org.fleet4j.compiler;

import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.Program;
import org.fleet4j.strategy.rules.EffectiveStrategy;

/**
 * An ordered list of passes. {@link #forStrategy} takes every registered pass ({@link PassDescription}) that the
 * effective strategy enables, in increasing order:
 * <ul>
 * <li>100 amp: it derives backward again from the scaled loss, so every later pass sees the final ops;</li>
 * <li>200-299 op fusions (fuse_elewise_add_act_ops 200, fuse_relu_depthwise_conv 205, fuse_bn_act_ops 210): they
 * change which ops produce gradients;</li>
 * <li>300 find_unused_parameters, 400 gradient_merge: it gates the gradients' consumers;</li>
 * <li>500-599 gradient bucketing and what rewrites its allreduces (fuse_all_reduce_ops 500, fp16_allreduce 510,
 * use_hierarchical_allreduce 520): they need the final producers;</li>
 * <li>600 sync_batch_norm: its statistics' allreduces must not join a gradient bucket;</li>
 * <li>700 fuse_all_optimizer_ops: it reads the bucketed gradients;</li>
 * <li>800 enable_inplace: buffer reuse needs to know every reader of every var;</li>
 * <li>900 overlap_allreduce: it splits each finished allreduce into its start and wait.</li>
 * </ul>
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
        return PassRegistry.all().stream().filter(d -> d.enabled(context)).map(PassDescription::name).toList();
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
