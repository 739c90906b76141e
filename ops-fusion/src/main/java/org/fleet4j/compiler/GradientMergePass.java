package org.fleet4j.compiler;

import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.GRADIENT_MERGE;
import static org.fleet4j.strategy.schema.StrategySchema.GRADIENT_MERGE_AVG;
import static org.fleet4j.strategy.schema.StrategySchema.GRADIENT_MERGE_K_STEPS;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ir.VarKind;
import org.fleet4j.core.ops.ControlOps;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * {@code gradient_merge} (Paddle's batch merge): every step adds each gradient into a persistable accumulator
 * ({@code g@GRAD_MERGE}); the tail of the program that consumes gradients (allreduces, updates, the step counter)
 * runs only every k-th step, on the accumulators (divided by k when {@code avg}), which it then zeroes. k steps of
 * batch b thus equal one step of batch k b. The accumulators and the micro-step counter are created in a copy of the
 * startup program, which the result carries.
 */
public final class GradientMergePass implements Pass {
    public static final String NAME = "gradient_merge";
    static final String STEP_VAR = "@GRAD_MERGE_STEP@";
    static final String COND_VAR = "@GRAD_MERGE_COND@";
    private static final Set<String> UPDATES = Set.of("sgd", "momentum", "adam", "adamw");

    private final int kSteps;
    private final boolean avg;

    public GradientMergePass(int kSteps, boolean avg) {
        if (kSteps < 1) {
            throw new IllegalArgumentException("gradient_merge_configs.k_steps must be at least 1, is " + kSteps);
        }
        this.kSteps = kSteps;
        this.avg = avg;
    }

    public static GradientMergePass of(PassContext s) {
        return new GradientMergePass(s.knob(StrategySchema.GRADIENT_MERGE_K_STEPS), s.knob(StrategySchema.GRADIENT_MERGE_AVG));
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public PassResult apply(Program program) {
        Block block = program.globalBlock();
        List<Op> ops = block.ops();
        Set<String> grads = new LinkedHashSet<>();
        for (Op op : ops) {
            if (UPDATES.contains(op.type())) {
                grads.add(op.in("Grad"));
            }
        }
        if (grads.isEmpty()) {
            return PassResult.unchanged(program, "nothing merged: the program has no sgd, momentum, adam or adamw update");
        }
        if (program.startupProgram() == null) {
            return PassResult.unchanged(program, "nothing merged: the program has no startup program to create the"
                    + " accumulators in");
        }
        for (String g : grads) {
            Var v = block.var(g);
            if (v.kind() == VarKind.SELECTED_ROWS || !v.dtype().isFloating() || fixed(v) < 0) {
                return PassResult.unchanged(program, "nothing merged: gradient " + g + " is "
                        + (v.kind() == VarKind.SELECTED_ROWS ? "sparse" : "not a fixed-shape float tensor")
                        + "; accumulators hold dense fixed shapes");
            }
        }
        int tail = firstReader(ops, grads);
        Program result = ProgramEdits.copyOf(program);
        Program startup = ProgramEdits.copyOf(program.startupProgram());
        result.setStartupProgram(startup);
        Block out = result.globalBlock();
        List<String> accs = new ArrayList<>();
        for (String g : grads) {
            Var v = block.var(g);
            String acc = g + "@GRAD_MERGE";
            accs.add(acc);
            persistable(out, startup, acc, v.dtype(), v.shape());
        }
        persistable(out, startup, STEP_VAR, DType.I64, new long[]{1});
        List<Op> rebuilt = new ArrayList<>(ops.subList(0, tail));
        List<String> gradList = List.copyOf(grads);
        for (int j = 0; j < gradList.size(); j++) {
            rebuilt.add(new Op("elementwise_add", Map.of("X", List.of(accs.get(j)), "Y", List.of(gradList.get(j))),
                    Map.of("Out", List.of(accs.get(j))), Map.of()));
        }
        rebuilt.add(new Op(ControlOps.MERGE_STEP, Map.of("Step", List.of(STEP_VAR)),
                Map.of("StepOut", List.of(STEP_VAR), "Cond", List.of(COND_VAR)), Map.of("k_steps", kSteps)));
        rebuilt.add(new Op(ControlOps.BEGIN, Map.of("Cond", List.of(COND_VAR)), Map.of(), Map.of()));
        if (avg && kSteps > 1) {
            for (String acc : accs) {
                rebuilt.add(scale(acc, 1f / kSteps));
            }
        }
        for (Op op : ops.subList(tail, ops.size())) {
            Op renamed = new Op(op.type(), op.inputs(), op.outputs(), op.attrs());
            for (int j = 0; j < gradList.size(); j++) {
                renamed.renameVar(gradList.get(j), accs.get(j));
            }
            rebuilt.add(renamed);
        }
        for (String acc : accs) {
            rebuilt.add(scale(acc, 0f));
        }
        rebuilt.add(new Op(ControlOps.END, Map.of(), Map.of(), Map.of()));
        ProgramEdits.replaceOps(out, rebuilt);
        ProgramEdits.removeUnusedTemps(out);
        return new PassResult(result, List.of("merged " + grads.size() + " gradients over k_steps " + kSteps
                + (avg ? " (averaged)" : " (summed)") + "; ops #" + tail + ".." + (ops.size() - 1)
                + " (the gradients' consumers) now run every " + kSteps + "th step, on the accumulators"));
    }

    private static Op scale(String var, float factor) {
        return new Op("scale", Map.of("X", List.of(var)), Map.of("Out", List.of(var)), Map.of("scale", factor));
    }

    private static void persistable(Block main, Program startup, String name, DType dtype, long[] shape) {
        main.createVar(name, dtype, shape).setPersistable(true).setStopGradient(true);
        startup.globalBlock().createVar(name, dtype, shape).setPersistable(true);
        startup.globalBlock().appendOp("fill_constant", Map.of(), Map.of("Out", List.of(name)),
                Map.of("shape", shape, "dtype", dtype.displayName(), "value", 0f));
    }

    /** The first op that reads a gradient after backward produced it: where the merged tail starts. */
    private static int firstReader(List<Op> ops, Set<String> grads) {
        int tail = ops.size();
        for (String g : grads) {
            int produced = -1;
            for (int w : ProgramEdits.writers(ops, g)) {
                if (ops.get(w).type().endsWith("_grad") || ops.get(w).type().equals("sum")) {
                    produced = w;
                }
            }
            for (int r : ProgramEdits.readers(ops, g)) {
                if (r > produced) {
                    tail = Math.min(tail, r);
                    break;
                }
            }
        }
        return tail;
    }

    private static long fixed(Var v) {
        long n = 1;
        for (long d : v.shape()) {
            if (d < 0) {
                return -1;
            }
            n *= d;
        }
        return n;
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 400, List.of(any(GRADIENT_MERGE), any(GRADIENT_MERGE_K_STEPS), any(GRADIENT_MERGE_AVG)),
                    c -> c.knob(GRADIENT_MERGE), GradientMergePass::of);
        }
    }
}
