package org.fleet4j.pserver.table;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Which rows of a sparse table go, and when. A shrink (Paddle's name for the pass) visits every row and removes those
 * that any rule below condemns; it runs before every save of the table and, with {@code shrinkEverySteps > 0}, every
 * that many of the table's steps. Rules left at 0 are off.
 *
 * <ul>
 *   <li>{@code stepsToLive} (DeepRec's {@code GlobalStepEvict(steps_to_live)}): a row not updated for more than that
 *   many steps (the table's steps: see {@link SparseTable#step}) goes.</li>
 *   <li>{@code l2WeightThreshold} (DeepRec's {@code L2WeightEvict(l2_weight_threshold)}): a row whose value's L2
 *   norm is below it goes.</li>
 *   <li>show/click score (Paddle's {@code CtrCommonAccessor::Shrink}, settings of its {@code CtrAccessorParameter}):
 *   each shrink first decays a row's show and click by {@code showClickDecayRate}, then removes it when its score
 *   {@code (show - click) * nonclkCoeff + click * clickCoeff} is below {@code deleteThreshold}, or when more than
 *   {@code deleteAfterUnseenDays} shrinks have passed since its last update (Paddle counts unseen days per save
 *   pass). A show is a sighting (a pull of the row); workers send no clicks, so click stays 0 and the score is the
 *   decayed count of sightings times {@code nonclkCoeff}.</li>
 * </ul>
 */
public record RowEviction(long stepsToLive, double l2WeightThreshold, double deleteThreshold, int deleteAfterUnseenDays,
                          double showClickDecayRate, double nonclkCoeff, double clickCoeff, long shrinkEverySteps) {
    /** Paddle's {@code CtrAccessorParameter} defaults for the settings that only shape the score. */
    public static final double DEFAULT_DECAY = 0.98;
    public static final double DEFAULT_NONCLK_COEFF = 0.1;
    public static final double DEFAULT_CLICK_COEFF = 1.0;

    public RowEviction {
        if (stepsToLive < 0 || l2WeightThreshold < 0 || deleteThreshold < 0 || deleteAfterUnseenDays < 0
                || shrinkEverySteps < 0) {
            throw new IllegalArgumentException("eviction settings must not be negative: steps_to_live " + stepsToLive
                    + ", l2_weight_threshold " + l2WeightThreshold + ", delete_threshold " + deleteThreshold
                    + ", delete_after_unseen_days " + deleteAfterUnseenDays + ", shrink_every_steps " + shrinkEverySteps);
        }
        if (!(showClickDecayRate > 0 && showClickDecayRate <= 1)) {
            throw new IllegalArgumentException("show_click_decay_rate must be in (0, 1], got " + showClickDecayRate);
        }
    }

    /** No rule: rows stay. */
    public static RowEviction none() {
        return new RowEviction(0, 0, 0, 0, DEFAULT_DECAY, DEFAULT_NONCLK_COEFF, DEFAULT_CLICK_COEFF, 0);
    }

    public static RowEviction stepsToLive(long steps) {
        return new RowEviction(steps, 0, 0, 0, DEFAULT_DECAY, DEFAULT_NONCLK_COEFF, DEFAULT_CLICK_COEFF, 0);
    }

    public RowEviction withShrinkEverySteps(long steps) {
        return new RowEviction(stepsToLive, l2WeightThreshold, deleteThreshold, deleteAfterUnseenDays,
                showClickDecayRate, nonclkCoeff, clickCoeff, steps);
    }

    /** Whether any rule is on. */
    public boolean evicts() {
        return stepsToLive > 0 || l2WeightThreshold > 0 || scores();
    }

    /** Whether the show/click rules are on. */
    public boolean scores() {
        return deleteThreshold > 0 || deleteAfterUnseenDays > 0;
    }

    /** Whether rows carry show, click, unseen days and their last update's step ({@link RowStats}). */
    public boolean keepsRowStats() {
        return stepsToLive > 0 || scores();
    }

    public double score(double show, double click) {
        return (show - click) * nonclkCoeff + click * clickCoeff;
    }

    public String describe() {
        if (!evicts()) {
            return "rows stay";
        }
        List<String> rules = new ArrayList<>();
        if (stepsToLive > 0) {
            rules.add("not updated for " + stepsToLive + " steps");
        }
        if (l2WeightThreshold > 0) {
            rules.add(String.format(Locale.ROOT, "L2 norm below %s", l2WeightThreshold));
        }
        if (deleteThreshold > 0) {
            rules.add(String.format(Locale.ROOT, "show/click score below %s (decay %s per shrink)", deleteThreshold,
                    showClickDecayRate));
        }
        if (deleteAfterUnseenDays > 0) {
            rules.add("unseen for more than " + deleteAfterUnseenDays + " shrinks");
        }
        return "evicts rows " + String.join(", or ", rules) + "; shrinks at every save"
                + (shrinkEverySteps > 0 ? " and every " + shrinkEverySteps + " steps" : "");
    }
}
