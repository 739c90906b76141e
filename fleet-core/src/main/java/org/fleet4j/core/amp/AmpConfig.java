package org.fleet4j.core.amp;

import java.util.Objects;
import java.util.Set;

/**
 * The strategy's {@code amp_configs}, with Paddle's names and defaults.
 *
 * @param dtype                  compute dtype of white-listed ops
 * @param initLossScaling        the first loss scale
 * @param incrEveryNSteps        finite steps in a row after which the scale grows
 * @param decrEveryNNanOrInf     steps with inf/nan gradients in a row after which the scale shrinks
 * @param incrRatio              growth factor (> 1)
 * @param decrRatio              shrink factor (in (0, 1))
 * @param useDynamicLossScaling  false keeps the scale fixed (steps with inf/nan are still skipped)
 * @param customWhiteList        ops added to the reduced-precision list
 * @param customBlackList        ops kept in fp32
 */
public record AmpConfig(AmpDtype dtype, double initLossScaling, int incrEveryNSteps, int decrEveryNNanOrInf,
                        double incrRatio, double decrRatio, boolean useDynamicLossScaling,
                        Set<String> customWhiteList, Set<String> customBlackList) {
    public AmpConfig {
        Objects.requireNonNull(dtype, "dtype");
        require(initLossScaling >= 1 && Double.isFinite(initLossScaling), "init_loss_scaling", initLossScaling, "a finite number >= 1");
        require(incrEveryNSteps >= 1, "incr_every_n_steps", incrEveryNSteps, "an integer >= 1");
        require(decrEveryNNanOrInf >= 1, "decr_every_n_nan_or_inf", decrEveryNNanOrInf, "an integer >= 1");
        require(incrRatio > 1 && Double.isFinite(incrRatio), "incr_ratio", incrRatio, "a number > 1");
        require(decrRatio > 0 && decrRatio < 1, "decr_ratio", decrRatio, "a number in (0, 1)");
        customWhiteList = Set.copyOf(customWhiteList);
        customBlackList = Set.copyOf(customBlackList);
        for (String op : customWhiteList) {
            if (customBlackList.contains(op)) {
                throw new IllegalArgumentException("amp_configs: op '" + op
                        + "' is in both custom_white_list and custom_black_list; keep it in one");
            }
        }
    }

    private static void require(boolean ok, String key, Object value, String expected) {
        if (!ok) {
            throw new IllegalArgumentException("amp_configs." + key + " = " + value + ": expected " + expected);
        }
    }

    /** Paddle's defaults: scale 2^15, grow x2 after 1000 good steps, shrink x0.8 after 2 bad ones. */
    public static AmpConfig defaults(AmpDtype dtype) {
        return new AmpConfig(dtype, 32768.0, 1000, 2, 2.0, 0.8, dtype == AmpDtype.FP16, Set.of(), Set.of());
    }
}
