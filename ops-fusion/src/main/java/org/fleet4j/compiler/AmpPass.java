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

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.amp.AmpConfig;
import org.fleet4j.core.amp.AmpDtype;
import org.fleet4j.core.amp.AmpOpLists;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.ClipOps;
import org.fleet4j.core.ops.ControlOps;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * {@code amp}: automatic mixed precision as a program rewrite (Paddle's static {@code amp.decorate}). The forward
 * ops get casts so white-listed ops compute in bfloat16 ({@link MixedPrecisionCasts}); parameters stay float32
 * master weights. The loss is multiplied by the persistable loss scale, backward is derived again from the scaled
 * loss (so {@code cast_grad} carries gradients back to float32), and after the gradients' allreduces, before the
 * first update, {@code check_finite_and_unscale} divides them by the scale and flags inf/nan; with dynamic loss
 * scaling {@code update_loss_scaling} then moves the scale; the updates run between {@code conditional_begin} and
 * {@code conditional_end}, so a step with inf/nan changes no parameter or optimizer state. Checking after the
 * allreduce means every rank sees the same sums, so all ranks skip the same steps. The scale and its step counters
 * are persistable, created by the startup program, and so saved with checkpoints.
 *
 * <p>float16 is refused: Fleet4J's tensors have no float16 dtype (the CPU has none), so no program can hold one.
 */
public final class AmpPass implements Pass {
    public static final String NAME = "amp";
    static final String LOSS_SCALING = "@LOSS_SCALING@";
    static final String GOOD_STEPS = "@LOSS_SCALING_GOOD_STEPS@";
    static final String BAD_STEPS = "@LOSS_SCALING_BAD_STEPS@";
    static final String FOUND_INFINITE = "@FOUND_INFINITE@";
    static final String STEP_FINITE = "@AMP_STEP_FINITE@";
    /** White-listed ops whose CPU kernels take bfloat16 inputs. */
    public static final Set<String> CPU_BF16_KERNELS = Set.of("matmul");
    private static final Set<String> UPDATES = Set.of("sgd", "momentum", "adam", "adamw");

    private final AmpConfig config;
    private final AmpOpLists lists;
    private final Set<String> lowPrecisionKernels;

    /** AMP with {@code config}, running white ops low only where {@code lowPrecisionKernels} has a kernel for them. */
    public AmpPass(AmpConfig config, Set<String> lowPrecisionKernels) {
        if (config.dtype() != AmpDtype.BF16) {
            throw new IllegalArgumentException("amp_configs.dtype " + config.dtype().name().toLowerCase()
                    + ": Fleet4J programs have no float16 dtype (CPU tensors hold float32, float64 and bfloat16);"
                    + " set amp_configs.dtype: bfloat16");
        }
        this.config = config;
        this.lists = new AmpOpLists(config);
        this.lowPrecisionKernels = Set.copyOf(lowPrecisionKernels);
    }

    public static AmpPass of(PassContext s) {
        AmpConfig c = new AmpConfig(AmpDtype.parse(s.knob(StrategySchema.AMP_DTYPE)),
                s.knob(StrategySchema.AMP_INIT_LOSS_SCALING), s.knob(StrategySchema.AMP_INCR_EVERY_N_STEPS),
                s.knob(StrategySchema.AMP_DECR_EVERY_N_NAN_OR_INF), s.knob(StrategySchema.AMP_INCR_RATIO),
                s.knob(StrategySchema.AMP_DECR_RATIO), s.knob(StrategySchema.AMP_USE_DYNAMIC_LOSS_SCALING),
                Set.copyOf(s.knob(StrategySchema.AMP_CUSTOM_WHITE_LIST)),
                Set.copyOf(s.knob(StrategySchema.AMP_CUSTOM_BLACK_LIST)));
        return new AmpPass(c, CPU_BF16_KERNELS);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public PassResult apply(Program program) {
        Block block = program.globalBlock();
        List<Op> ops = block.ops();
        if (block.hasVar(LOSS_SCALING)) {
            return PassResult.unchanged(program, "nothing done: the program already has " + LOSS_SCALING);
        }
        int seed = lossGradSeed(ops);
        if (seed < 0) {
            return PassResult.unchanged(program, "nothing done: the program has no backward (no fill_constant of a"
                    + " loss's @GRAD)");
        }
        String loss = ops.get(seed).out("Out").substring(0, ops.get(seed).out("Out").length() - Backward.GRAD_SUFFIX.length());
        int tail = seed + 1;
        while (tail < ops.size() && (ops.get(tail).type().endsWith("_grad") || ops.get(tail).type().equals("sum"))) {
            tail++;
        }
        Map<String, String> gradOfParam = new LinkedHashMap<>();
        for (Op op : ops.subList(tail, ops.size())) {
            if (UPDATES.contains(op.type())) {
                gradOfParam.put(op.in("Param"), op.in("Grad"));
            }
        }
        if (gradOfParam.isEmpty()) {
            return PassResult.unchanged(program, "nothing done: the program has no sgd, momentum, adam or adamw update");
        }
        if (program.startupProgram() == null) {
            return PassResult.unchanged(program, "nothing done: the program has no startup program to create "
                    + LOSS_SCALING + " in");
        }
        Program result = ProgramEdits.copyOf(program);
        Program startup = ProgramEdits.copyOf(program.startupProgram());
        result.setStartupProgram(startup);
        Block out = result.globalBlock();
        persistable(out, startup, LOSS_SCALING, DType.F32, (float) config.initLossScaling());
        persistable(out, startup, GOOD_STEPS, DType.I64, 0f);
        persistable(out, startup, BAD_STEPS, DType.I64, 0f);

        ProgramEdits.replaceOps(out, List.of());
        MixedPrecisionCasts casts = new MixedPrecisionCasts(out, lists, lowPrecisionKernels, DType.BF16);
        for (Op op : ops.subList(0, seed)) {
            casts.append(op);
        }
        String lossF32 = out.var(loss).dtype() == DType.F32 ? loss : casts.castOf(loss, DType.F32);
        String scaled = loss + "@SCALED";
        out.appendOp("elementwise_mul", Map.of("X", List.of(lossF32), "Y", List.of(LOSS_SCALING)),
                Map.of("Out", List.of(scaled)), Map.of());
        ProgramEdits.removeUnusedTemps(out);
        Backward.appendBackward(out.var(scaled), gradOfParam.keySet());
        for (var e : gradOfParam.entrySet()) {
            if (ProgramEdits.writers(out.ops(), e.getValue()).isEmpty()) {
                throw new IrException("amp: backward derived again from " + scaled + " gives parameter " + e.getKey()
                        + " no gradient " + e.getValue() + ", which its update reads");
            }
        }
        // the updates begin with the first op after backward that reads a parameter or clips the gradients: a
        // regularizer's decay, added to the gradient, and the clip by global norm must see it unscaled, so they go
        // inside the skipped block too
        int firstUpdate = -1;
        int lastUpdate = -1;
        for (int i = tail; i < ops.size(); i++) {
            boolean readsParam = ops.get(i).allInputs().stream().anyMatch(gradOfParam::containsKey);
            boolean clips = ops.get(i).type().equals(ClipOps.CLIP_BY_GLOBAL_NORM);
            if (firstUpdate < 0 && (readsParam || clips || UPDATES.contains(ops.get(i).type()))) {
                firstUpdate = i;
            }
            if (UPDATES.contains(ops.get(i).type())) {
                lastUpdate = i;
            }
        }
        for (int i = tail; i < ops.size(); i++) {
            if (i == firstUpdate) {
                appendCheckAndSkip(out, List.copyOf(new LinkedHashSet<>(gradOfParam.values())));
            }
            casts.append(ops.get(i));
            if (i == lastUpdate) {
                out.appendOp(ControlOps.END, Map.of(), Map.of(), Map.of());
            }
        }
        return new PassResult(result, List.of(describe(casts, loss, gradOfParam.size())));
    }

    /** Unscale and check the gradients, move the scale, and open the block of updates that runs on finite steps. */
    private void appendCheckAndSkip(Block out, List<String> grads) {
        out.appendOp("check_finite_and_unscale", Map.of("X", grads, "Scale", List.of(LOSS_SCALING)),
                Map.of("Out", grads, "FoundInfinite", List.of(FOUND_INFINITE)), Map.of());
        if (config.useDynamicLossScaling()) {
            out.appendOp("update_loss_scaling", Map.of("FoundInfinite", List.of(FOUND_INFINITE),
                            "PrevLossScaling", List.of(LOSS_SCALING), "InGoodSteps", List.of(GOOD_STEPS),
                            "InBadSteps", List.of(BAD_STEPS)),
                    Map.of("LossScaling", List.of(LOSS_SCALING), "OutGoodSteps", List.of(GOOD_STEPS),
                            "OutBadSteps", List.of(BAD_STEPS)),
                    Map.of("incr_every_n_steps", config.incrEveryNSteps(),
                            "decr_every_n_nan_or_inf", config.decrEveryNNanOrInf(),
                            "incr_ratio", (float) config.incrRatio(), "decr_ratio", (float) config.decrRatio()));
        }
        out.appendOp("logical_not", Map.of("X", List.of(FOUND_INFINITE)), Map.of("Out", List.of(STEP_FINITE)), Map.of());
        out.appendOp(ControlOps.BEGIN, Map.of("Cond", List.of(STEP_FINITE)), Map.of(), Map.of());
    }

    private String describe(MixedPrecisionCasts casts, String loss, int grads) {
        StringBuilder sb = new StringBuilder("bfloat16 compute in ").append(casts.lowOps().isEmpty() ? "no op"
                : casts.lowOps().toString()).append(" with ").append(casts.castOps()).append(" cast ops");
        if (!casts.whiteOpsKeptFp32().isEmpty()) {
            sb.append("; white ops without a bfloat16 kernel here stay float32: ").append(casts.whiteOpsKeptFp32());
        }
        sb.append("; loss ").append(loss).append(" scaled by ").append(LOSS_SCALING).append(" (init ")
                .append(config.initLossScaling());
        if (config.useDynamicLossScaling()) {
            sb.append(", dynamic: x").append(config.incrRatio()).append(" after ").append(config.incrEveryNSteps())
                    .append(" finite steps, x").append(config.decrRatio()).append(" after ")
                    .append(config.decrEveryNNanOrInf()).append(" with inf/nan)");
        } else {
            sb.append(", fixed)");
        }
        return sb.append("; ").append(grads).append(" gradients unscaled and checked for inf/nan before the updates,")
                .append(" which a non-finite step skips").toString();
    }

    /** The fill_constant that seeds backward with d loss / d loss = 1: the first one writing a var's @GRAD. */
    private static int lossGradSeed(List<Op> ops) {
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (op.type().equals("fill_constant") && op.out("Out").endsWith(Backward.GRAD_SUFFIX)) {
                String loss = op.out("Out").substring(0, op.out("Out").length() - Backward.GRAD_SUFFIX.length());
                if (!ProgramEdits.writers(ops.subList(0, i), loss).isEmpty()) {
                    return i;
                }
            }
        }
        return -1;
    }

    private static void persistable(Block main, Program startup, String name, DType dtype, float value) {
        main.createVar(name, dtype, 1).setPersistable(true).setStopGradient(true);
        startup.globalBlock().createVar(name, dtype, 1).setPersistable(true);
        startup.globalBlock().appendOp("fill_constant", Map.of(), Map.of("Out", List.of(name)),
                Map.of("shape", new long[]{1}, "dtype", dtype.displayName(), "value", value));
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 100, List.of(any(AMP), only(AMP_DTYPE, "bfloat16"), any(AMP_INIT_LOSS_SCALING),
                    any(AMP_INCR_EVERY_N_STEPS), any(AMP_DECR_EVERY_N_NAN_OR_INF), any(AMP_INCR_RATIO), any(AMP_DECR_RATIO),
                    any(AMP_USE_DYNAMIC_LOSS_SCALING), any(AMP_CUSTOM_WHITE_LIST), any(AMP_CUSTOM_BLACK_LIST)),
                    c -> c.knob(AMP), AmpPass::of);
        }
    }
}
