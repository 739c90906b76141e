package org.fleet4j.core.optim;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.tensor.DType;

/** Adam (Kingma and Ba), and AdamW (decoupled weight decay, Loshchilov and Hutter) when weightDecay > 0. */
public class Adam extends Optimizer {
    private final float beta1;
    private final float beta2;
    private final float epsilon;
    private final boolean lazyMode;

    public Adam(double lr) {
        this(LrSchedule.constant(lr), 0.9f, 0.999f, 1e-8f, false);
    }

    public Adam(LrSchedule schedule, float beta1, float beta2, float epsilon, boolean lazyMode) {
        super(schedule);
        this.beta1 = beta1;
        this.beta2 = beta2;
        this.epsilon = epsilon;
        this.lazyMode = lazyMode;
    }

    @Override
    public String name() {
        return "adam";
    }

    protected String opType() {
        return "adam";
    }

    /** The op's attributes beyond Adam's, for the update of {@code pg}'s parameter. */
    protected void addAttrs(ParamGrad pg, Map<String, Object> attrs) {
    }

    @Override
    protected void appendUpdate(Updates u, ParamGrad pg, String lr) {
        String m1 = u.like(pg.param(), "moment1_0").name();
        String m2 = u.like(pg.param(), "moment2_0").name();
        String b1 = u.persistable(pg.param() + "_beta1_pow_acc_0", DType.F32, new long[]{1}, beta1).name();
        String b2 = u.persistable(pg.param() + "_beta2_pow_acc_0", DType.F32, new long[]{1}, beta2).name();
        Map<String, Object> attrs = new LinkedHashMap<>(Map.of("beta1", beta1, "beta2", beta2, "epsilon", epsilon,
                "lazy_mode", lazyMode));
        addAttrs(pg, attrs);
        u.block().appendOp(opType(),
                Map.of("Param", List.of(pg.param()), "Grad", List.of(pg.grad()), "LearningRate", List.of(lr),
                        "Moment1", List.of(m1), "Moment2", List.of(m2), "Beta1Pow", List.of(b1), "Beta2Pow", List.of(b2)),
                Map.of("ParamOut", List.of(pg.param()), "Moment1Out", List.of(m1), "Moment2Out", List.of(m2),
                        "Beta1PowOut", List.of(b1), "Beta2PowOut", List.of(b2)),
                attrs);
    }
}
