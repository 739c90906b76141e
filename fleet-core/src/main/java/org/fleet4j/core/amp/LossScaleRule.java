package org.fleet4j.core.amp;

/**
 * How the loss scale moves, as Paddle's {@code update_loss_scaling}: after {@code decrEveryNNanOrInf} steps with
 * inf/nan gradients in a row it shrinks by {@code decrRatio} (never below 1); after {@code incrEveryNSteps} finite
 * steps in a row it grows by {@code incrRatio} (unless that would overflow float32). Both the host-side
 * {@link LossScaler} and the {@code update_loss_scaling} kernel step through this one rule.
 */
public record LossScaleRule(int incrEveryNSteps, int decrEveryNNanOrInf, double incrRatio, double decrRatio) {

    /** The scale with the finite and the non-finite steps counted since it last changed. */
    public record State(double scale, long goodSteps, long badSteps) {
    }

    public static LossScaleRule of(AmpConfig config) {
        return new LossScaleRule(config.incrEveryNSteps(), config.decrEveryNNanOrInf(), config.incrRatio(),
                config.decrRatio());
    }

    public State next(State s, boolean foundInfOrNan) {
        if (foundInfOrNan) {
            long bad = s.badSteps() + 1;
            if (bad >= decrEveryNNanOrInf) {
                return new State(Math.max(1.0, s.scale() * decrRatio), 0, 0);
            }
            return new State(s.scale(), 0, bad);
        }
        long good = s.goodSteps() + 1;
        if (good >= incrEveryNSteps) {
            double grown = s.scale() * incrRatio;
            return new State(Double.isFinite(grown) && grown <= Float.MAX_VALUE ? grown : s.scale(), 0, 0);
        }
        return new State(s.scale(), good, 0);
    }
}
