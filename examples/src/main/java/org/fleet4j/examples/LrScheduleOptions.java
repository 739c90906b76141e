package org.fleet4j.examples;

import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.text.Quoted;
import picocli.CommandLine.Option;

/**
 * The learning-rate schedule of a training program ({@code @Mixin}): constant, or nanoGPT's linear warm-up then cosine
 * decay to a floor.
 */
final class LrScheduleOptions {
    @Option(names = "--lr_schedule", description = "constant or warmup_cosine: a linear warm-up over --warmup_steps,"
            + " then half a cosine down to --min_lr at --lr_decay_steps (default ${DEFAULT-VALUE})")
    private String schedule = "constant";
    @Option(names = "--warmup_steps", description = "warmup_cosine: steps of the linear ramp from lr / (warmup_steps + 1)"
            + " to lr (default ${DEFAULT-VALUE})")
    private int warmupSteps = 0;
    @Option(names = "--min_lr", description = "warmup_cosine: the rate the cosine ends at (default: lr / 10)")
    private Double minLr;
    @Option(names = "--lr_decay_steps", description = "warmup_cosine: the step the cosine reaches --min_lr, after which the"
            + " rate stays there; give the full length when a run is cut into resumed parts (default: --steps)")
    private Integer decaySteps;

    String name() {
        return schedule;
    }

    /** The schedule for a training of {@code totalSteps} at base rate {@code lr}; bad values are refused naming the flag. */
    LrSchedule schedule(double lr, int totalSteps) {
        switch (schedule) {
            case "constant" -> {
                if (warmupSteps != 0 || minLr != null || decaySteps != null) {
                    throw new IllegalArgumentException("--warmup_steps, --min_lr and --lr_decay_steps shape the"
                            + " warmup_cosine schedule; add --lr_schedule warmup_cosine, or drop them");
                }
                return LrSchedule.constant(lr);
            }
            case "warmup_cosine" -> {
                int decay = decaySteps != null ? decaySteps : totalSteps;
                double floor = minLr != null ? minLr : lr / 10;
                if (warmupSteps < 0 || warmupSteps >= decay) {
                    throw new IllegalArgumentException("--warmup_steps must be in 0.." + (decay - 1) + " (below"
                            + " --lr_decay_steps " + decay + "), got " + warmupSteps);
                }
                if (!(floor >= 0) || floor > lr) {
                    throw new IllegalArgumentException("--min_lr must be in 0.." + lr + " (--lr), got " + floor);
                }
                return LrSchedule.warmupCosine(lr, warmupSteps, decay, floor, lr / (warmupSteps + 1));
            }
            default -> throw new IllegalArgumentException("--lr_schedule must be constant or warmup_cosine, got "
                    + Quoted.of(schedule));
        }
    }
}
