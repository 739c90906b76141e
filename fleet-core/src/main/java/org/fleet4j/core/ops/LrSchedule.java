package org.fleet4j.core.ops;

import org.fleet4j.core.ir.Op;

/** A learning-rate schedule: linear warm-up, then constant, step or cosine decay. */
public record LrSchedule(double baseLr, String decay, int stepSize, double gamma, int totalSteps, double minLr,
                         int warmupSteps, double warmupStartLr) {

    public static LrSchedule constant(double lr) {
        return new LrSchedule(lr, "constant", 1, 0.1, 0, 0, 0, 0);
    }

    /** lr * gamma^(step / stepSize). */
    public static LrSchedule stepDecay(double lr, int stepSize, double gamma) {
        return new LrSchedule(lr, "step", stepSize, gamma, 0, 0, 0, 0);
    }

    /** From lr down to minLr along half a cosine over totalSteps. */
    public static LrSchedule cosine(double lr, int totalSteps, double minLr) {
        return new LrSchedule(lr, "cosine", 1, 0.1, totalSteps, minLr, 0, 0);
    }

    /**
     * The transformer recipe's schedule: a linear ramp from warmupStartLr to lr over warmupSteps, then half a cosine
     * down to minLr at totalSteps (PyTorch's SequentialLR of LinearLR and CosineAnnealingLR(T_max = totalSteps -
     * warmupSteps, eta_min = minLr)).
     */
    public static LrSchedule warmupCosine(double lr, int warmupSteps, int totalSteps, double minLr, double warmupStartLr) {
        return cosine(lr, totalSteps, minLr).withWarmup(warmupSteps, warmupStartLr);
    }

    /** The same schedule after a linear ramp from startLr over the first warmupSteps steps. */
    public LrSchedule withWarmup(int steps, double startLr) {
        return new LrSchedule(baseLr, decay, stepSize, gamma, totalSteps, minLr, steps, startLr);
    }

    /** The lr_schedule op's attributes for this schedule. */
    public java.util.Map<String, Object> attrs() {
        return java.util.Map.of("base_lr", (float) baseLr, "decay", decay, "step_size", stepSize, "gamma", (float) gamma,
                "total_steps", totalSteps, "min_lr", (float) minLr, "warmup_steps", warmupSteps,
                "warmup_start_lr", (float) warmupStartLr);
    }

    static LrSchedule of(Op op) {
        return new LrSchedule(op.floatAttr("base_lr"), op.stringAttr("decay"), op.intAttr("step_size"),
                op.floatAttr("gamma"), op.intAttr("total_steps"), op.floatAttr("min_lr"), op.intAttr("warmup_steps"),
                op.floatAttr("warmup_start_lr"));
    }

    /** The learning rate at a 0-based step. */
    public double at(long step) {
        if (step < warmupSteps) {
            return warmupStartLr + (baseLr - warmupStartLr) * step / warmupSteps;
        }
        long s = step - warmupSteps;
        return switch (decay) {
            case "step" -> baseLr * Math.pow(gamma, s / stepSize);
            case "cosine" -> {
                long span = totalSteps - warmupSteps;
                double t = Math.min(s, span) / (double) span;
                yield minLr + 0.5 * (baseLr - minLr) * (1 + Math.cos(Math.PI * t));
            }
            default -> baseLr;
        };
    }
}
