package org.fleet4j.core.optim;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Regularizer;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ir.VarKind;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.tensor.DType;

/**
 * Turns a loss into training: appends backward, then the learning-rate schedule, the gradient clip when the optimizer
 * has one ({@link #withGradClip}, Paddle's grad_clip), the decay of the parameters that have a {@link Regularizer}
 * (before all updates, as Paddle's append_regularization_ops) and one update op per parameter; moments and the step
 * counter are persistable vars initialised by the startup program.
 */
public abstract class Optimizer {
    /** The step counter every schedule reads; incremented once per run of the main program. */
    public static final String STEP_VAR = "@LR_STEP@";

    private final LrSchedule schedule;
    private ClipGradByGlobalNorm gradClip;

    protected Optimizer(LrSchedule schedule) {
        this.schedule = schedule;
    }

    /**
     * Clips the gradients by their global norm before the updates (Paddle's {@code grad_clip=ClipGradByGlobalNorm(..)});
     * null for none. In data-parallel training the clip comes after the gradients' allreduces. Returns this optimizer.
     */
    public Optimizer withGradClip(ClipGradByGlobalNorm clip) {
        this.gradClip = clip;
        return this;
    }

    public ClipGradByGlobalNorm gradClip() {
        return gradClip;
    }

    public LrSchedule schedule() {
        return schedule;
    }

    /** A short name for logs ("sgd", "adam"). */
    public abstract String name();

    /** Appends backward and the updates; returns the parameters and their gradients. */
    public List<ParamGrad> minimize(Var loss) {
        List<ParamGrad> grads = Backward.appendBackward(loss);
        applyGradients(loss.block().program(), grads);
        return grads;
    }

    /** Appends the schedule, the updates and the step increment for gradients already in the program. */
    public void applyGradients(Program main, List<ParamGrad> grads) {
        Program startup = main.startupProgram();
        if (startup == null) {
            throw new IrException("the program has no startup program; build it with Layers(main, startup)");
        }
        Updates u = new Updates(main, startup);
        Var step = u.persistable(STEP_VAR, DType.I64, new long[]{1}, 0f);
        Var lr = main.globalBlock().createTemp("learning_rate");
        main.globalBlock().appendOp("lr_schedule", Map.of("Step", List.of(step.name())),
                Map.of("LearningRate", List.of(lr.name())), schedule.attrs());
        if (gradClip != null && !grads.isEmpty()) {
            gradClip.append(main.globalBlock(), grads);
        }
        for (ParamGrad pg : grads) {
            Regularizer r = main.globalBlock().var(pg.param()).regularizer();
            if (r != null) {
                appendDecay(main.globalBlock(), pg, r);
            }
        }
        for (ParamGrad pg : grads) {
            appendUpdate(u, pg, lr.name());
        }
        main.globalBlock().appendOp("increment", Map.of("X", List.of(step.name())),
                Map.of("Out", List.of(step.name())), Map.of());
    }

    protected abstract void appendUpdate(Updates u, ParamGrad pg, String lr);

    /**
     * Adds the decay of {@code pg}'s parameter to its gradient, in place (as Paddle does), so every op after it (the
     * updates, and the passes that find gradients through them) sees the gradient's own name.
     */
    private static void appendDecay(Block block, ParamGrad pg, Regularizer r) {
        if (block.var(pg.grad()).kind() == VarKind.SELECTED_ROWS) {
            throw new IrException("parameter " + pg.param() + " has the regularizer " + r + ", but its gradient "
                    + pg.grad() + " is sparse (an embedding with is_sparse=true), which a decay of the whole table"
                    + " would make dense; build that embedding with is_sparse=false, or drop its regularizer");
        }
        String term = pg.param();
        if (r.kind() == Regularizer.Kind.L1) {
            term = unary(block, "sign", term, pg.param() + "@SIGN", Map.of());
        }
        term = unary(block, "scale", term, pg.param() + "@DECAY", Map.of("scale", r.coeff()));
        block.appendOp("elementwise_add", Map.of("X", List.of(pg.grad()), "Y", List.of(term)),
                Map.of("Out", List.of(pg.grad())), Map.of());
    }

    private static String unary(Block block, String type, String x, String outPrefix, Map<String, Object> attrs) {
        String out = block.createTemp(outPrefix).name();
        block.appendOp(type, Map.of("X", List.of(x)), Map.of("Out", List.of(out)), attrs);
        return out;
    }

    /** Helpers for update ops: accumulators in both programs, and appending to the main block. */
    protected static final class Updates {
        private final Program main;
        private final Program startup;

        Updates(Program main, Program startup) {
            this.main = main;
            this.startup = startup;
        }

        public Block block() {
            return main.globalBlock();
        }

        /** A persistable var in the main program, created (once) and filled with a constant by the startup program. */
        public Var persistable(String name, DType dtype, long[] shape, float value) {
            if (main.globalBlock().hasVar(name)) {
                return main.globalBlock().var(name);
            }
            Var v = main.globalBlock().createVar(name, dtype, shape).setPersistable(true).setStopGradient(true);
            startup.globalBlock().createVar(name, dtype, shape).setPersistable(true);
            startup.globalBlock().appendOp("fill_constant", Map.of(), Map.of("Out", List.of(name)),
                    Map.of("shape", shape, "dtype", dtype.displayName(), "value", value));
            return v;
        }

        /** A zero-filled accumulator shaped like the parameter, named "param_suffix". */
        public Var like(String param, String suffix) {
            return like(param, suffix, 0f);
        }

        /** An accumulator shaped like the parameter, named "param_suffix", filled with {@code value}. */
        public Var like(String param, String suffix, float value) {
            Var p = main.globalBlock().var(param);
            return persistable(param + "_" + suffix, p.dtype(), p.shape(), value);
        }
    }
}
