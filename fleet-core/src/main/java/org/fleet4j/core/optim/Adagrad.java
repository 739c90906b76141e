package org.fleet4j.core.optim;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ops.LrSchedule;

/**
 * Adagrad (Duchi et al.): each element's step shrinks with the root of its summed squared gradients. The sum starts
 * at {@code initialAccumulator} (Paddle's and PyTorch's {@code initial_accumulator_value}, default 0; TensorFlow's
 * default is 0.1): at 0 an element's first step is {@code lr * sign(g)} whatever the gradient's size, and a positive
 * start bounds the first steps by {@code lr * |g| / sqrt(initialAccumulator)}.
 */
public final class Adagrad extends Optimizer {
    /** Added to the root of the summed squares, as Paddle's default. */
    public static final float DEFAULT_EPSILON = 1e-6f;
    private final float epsilon;
    private final float initialAccumulator;

    public Adagrad(double lr) {
        this(LrSchedule.constant(lr), DEFAULT_EPSILON);
    }

    public Adagrad(LrSchedule schedule, float epsilon) {
        this(schedule, epsilon, 0f);
    }

    public Adagrad(LrSchedule schedule, float epsilon, float initialAccumulator) {
        super(schedule);
        if (!(initialAccumulator >= 0) || !Float.isFinite(initialAccumulator)) {
            throw new IllegalArgumentException("Adagrad's initial accumulator value must be a finite number >= 0, got "
                    + initialAccumulator);
        }
        this.epsilon = epsilon;
        this.initialAccumulator = initialAccumulator;
    }

    @Override
    public String name() {
        return "adagrad";
    }

    @Override
    protected void appendUpdate(Updates u, ParamGrad pg, String lr) {
        String m = u.like(pg.param(), "moment_0", initialAccumulator).name();
        u.block().appendOp("adagrad",
                Map.of("Param", List.of(pg.param()), "Grad", List.of(pg.grad()), "Moment", List.of(m),
                        "LearningRate", List.of(lr)),
                Map.of("ParamOut", List.of(pg.param()), "MomentOut", List.of(m)),
                Map.of("epsilon", epsilon, "initial_accumulator_value", initialAccumulator));
    }
}
