package org.fleet4j.strategy;

import java.util.List;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * The sparse_table_configs group of a {@link DistributedStrategy}: admission and eviction of sparse-table rows on the
 * parameter servers (used when mode is ps). Setters write through to the strategy.
 */
public final class SparseTableConfigs {
    private final DistributedStrategy strategy;

    SparseTableConfigs(DistributedStrategy strategy) {
        this.strategy = strategy;
    }

    /** The sparse tables these settings apply to; empty: every sparse table. */
    public SparseTableConfigs tableNames(String... value) {
        strategy.set(StrategySchema.SPARSE_TABLE_NAMES, List.of(value));
        return this;
    }

    public List<String> tableNames() {
        return strategy.get(StrategySchema.SPARSE_TABLE_NAMES);
    }

    /** Which ids get a row: none, counter, probability or cbf. */
    public SparseTableConfigs filter(String value) {
        strategy.set(StrategySchema.SPARSE_FILTER, value);
        return this;
    }

    public String filter() {
        return strategy.get(StrategySchema.SPARSE_FILTER);
    }

    /** counter and cbf: the sighting at which an id gets its row. */
    public SparseTableConfigs filterFreq(int value) {
        strategy.set(StrategySchema.SPARSE_FILTER_FREQ, value);
        return this;
    }

    public int filterFreq() {
        return strategy.get(StrategySchema.SPARSE_FILTER_FREQ);
    }

    /** probability: the chance that a sighting admits an id. */
    public SparseTableConfigs admitProbability(double value) {
        strategy.set(StrategySchema.SPARSE_ADMIT_PROBABILITY, value);
        return this;
    }

    public double admitProbability() {
        return strategy.get(StrategySchema.SPARSE_ADMIT_PROBABILITY);
    }

    /** cbf: the distinct ids its counters are sized for. */
    public SparseTableConfigs maxElementSize(int value) {
        strategy.set(StrategySchema.SPARSE_MAX_ELEMENT_SIZE, value);
        return this;
    }

    public int maxElementSize() {
        return strategy.get(StrategySchema.SPARSE_MAX_ELEMENT_SIZE);
    }

    /** cbf: the false-positive probability at max_element_size ids. */
    public SparseTableConfigs falsePositiveProbability(double value) {
        strategy.set(StrategySchema.SPARSE_FALSE_POSITIVE_PROBABILITY, value);
        return this;
    }

    public double falsePositiveProbability() {
        return strategy.get(StrategySchema.SPARSE_FALSE_POSITIVE_PROBABILITY);
    }

    /** Evict rows not updated for more than this many steps; 0: off. */
    public SparseTableConfigs stepsToLive(int value) {
        strategy.set(StrategySchema.SPARSE_STEPS_TO_LIVE, value);
        return this;
    }

    public int stepsToLive() {
        return strategy.get(StrategySchema.SPARSE_STEPS_TO_LIVE);
    }

    /** Evict rows whose L2 norm is below this; 0: off. */
    public SparseTableConfigs l2WeightThreshold(double value) {
        strategy.set(StrategySchema.SPARSE_L2_WEIGHT_THRESHOLD, value);
        return this;
    }

    public double l2WeightThreshold() {
        return strategy.get(StrategySchema.SPARSE_L2_WEIGHT_THRESHOLD);
    }

    /** Evict rows whose decayed show/click score is below this; 0: off. */
    public SparseTableConfigs deleteThreshold(double value) {
        strategy.set(StrategySchema.SPARSE_DELETE_THRESHOLD, value);
        return this;
    }

    public double deleteThreshold() {
        return strategy.get(StrategySchema.SPARSE_DELETE_THRESHOLD);
    }

    /** Evict rows not updated in more than this many shrinks; 0: off. */
    public SparseTableConfigs deleteAfterUnseenDays(int value) {
        strategy.set(StrategySchema.SPARSE_DELETE_AFTER_UNSEEN_DAYS, value);
        return this;
    }

    public int deleteAfterUnseenDays() {
        return strategy.get(StrategySchema.SPARSE_DELETE_AFTER_UNSEEN_DAYS);
    }

    /** The factor each shrink multiplies show and click by. */
    public SparseTableConfigs showClickDecayRate(double value) {
        strategy.set(StrategySchema.SPARSE_SHOW_CLICK_DECAY_RATE, value);
        return this;
    }

    public double showClickDecayRate() {
        return strategy.get(StrategySchema.SPARSE_SHOW_CLICK_DECAY_RATE);
    }

    /** Weight of a show without a click in the score. */
    public SparseTableConfigs nonclkCoeff(double value) {
        strategy.set(StrategySchema.SPARSE_NONCLK_COEFF, value);
        return this;
    }

    public double nonclkCoeff() {
        return strategy.get(StrategySchema.SPARSE_NONCLK_COEFF);
    }

    /** Weight of a click in the score. */
    public SparseTableConfigs clickCoeff(double value) {
        strategy.set(StrategySchema.SPARSE_CLICK_COEFF, value);
        return this;
    }

    public double clickCoeff() {
        return strategy.get(StrategySchema.SPARSE_CLICK_COEFF);
    }

    /** Shrink every this many steps besides before saves; 0: at saves only. */
    public SparseTableConfigs shrinkEverySteps(int value) {
        strategy.set(StrategySchema.SPARSE_SHRINK_EVERY_STEPS, value);
        return this;
    }

    public int shrinkEverySteps() {
        return strategy.get(StrategySchema.SPARSE_SHRINK_EVERY_STEPS);
    }
}
