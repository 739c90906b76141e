package org.fleet4j.core.optim;

import java.util.Map;
import java.util.function.Predicate;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ops.LrSchedule;

/**
 * Adam with decoupled weight decay (torch.optim.AdamW): p *= 1 - lr * weightDecay before each Adam step, for the
 * parameters that {@code applyDecayParamFun} accepts by name (Paddle's apply_decay_param_fun; all by default); the
 * others take plain Adam steps.
 */
public final class AdamW extends Adam {
    private final float weightDecay;
    private final Predicate<String> applyDecayParamFun;

    public AdamW(double lr, float weightDecay) {
        this(LrSchedule.constant(lr), 0.9f, 0.999f, 1e-8f, weightDecay);
    }

    public AdamW(LrSchedule schedule, float beta1, float beta2, float epsilon, float weightDecay) {
        this(schedule, beta1, beta2, epsilon, weightDecay, name -> true);
    }

    /** As the others, decaying only the parameters whose names {@code applyDecayParamFun} accepts. */
    public AdamW(LrSchedule schedule, float beta1, float beta2, float epsilon, float weightDecay,
                 Predicate<String> applyDecayParamFun) {
        super(schedule, beta1, beta2, epsilon, false);
        this.weightDecay = weightDecay;
        this.applyDecayParamFun = applyDecayParamFun;
    }

    /**
     * The usual transformer recipe's choice: decay every parameter but biases and normalisation weights, that is
     * those whose last name part is {@code bias} or {@code b_<n>} (fc's and the norms' biases), and those with a name
     * part containing {@code norm} or starting with {@code ln} (layer_norm_0.w_0, batch_norm_0.w_0, h.0.ln_1.w_0).
     */
    public static Predicate<String> notBiasOrNorm() {
        return name -> {
            String[] parts = name.split("\\.");
            String last = parts[parts.length - 1];
            if (last.equals("bias") || last.matches("b_\\d+")) {
                return false;
            }
            for (String part : parts) {
                if (part.contains("norm") || part.startsWith("ln")) {
                    return false;
                }
            }
            return true;
        };
    }

    @Override
    public String name() {
        return "adamw";
    }

    @Override
    protected String opType() {
        return "adamw";
    }

    @Override
    protected void addAttrs(ParamGrad pg, Map<String, Object> attrs) {
        attrs.put("coeff", applyDecayParamFun.test(pg.param()) ? weightDecay : 0f);
    }
}
