package org.fleet4j.pserver.compile;

import com.google.auto.service.AutoService;
import java.util.List;
import org.fleet4j.strategy.schema.KnobReader;
import org.fleet4j.strategy.schema.KnobUse;
import org.fleet4j.strategy.schema.StrategySchema;

/** The knobs of the servers' sparse tables that the PS compile step reads ({@link SparseTableRules}). */
@AutoService(KnobReader.class)
public final class PsTableKnobs implements KnobReader {
    @Override
    public String reader() {
        return "parameter-server tables";
    }

    @Override
    public List<KnobUse> knobs() {
        return List.of(KnobUse.any(StrategySchema.SPARSE_TABLE_NAMES), KnobUse.any(StrategySchema.SPARSE_FILTER),
                KnobUse.any(StrategySchema.SPARSE_FILTER_FREQ), KnobUse.any(StrategySchema.SPARSE_ADMIT_PROBABILITY),
                KnobUse.any(StrategySchema.SPARSE_MAX_ELEMENT_SIZE),
                KnobUse.any(StrategySchema.SPARSE_FALSE_POSITIVE_PROBABILITY),
                KnobUse.any(StrategySchema.SPARSE_STEPS_TO_LIVE), KnobUse.any(StrategySchema.SPARSE_L2_WEIGHT_THRESHOLD),
                KnobUse.any(StrategySchema.SPARSE_DELETE_THRESHOLD),
                KnobUse.any(StrategySchema.SPARSE_DELETE_AFTER_UNSEEN_DAYS),
                KnobUse.any(StrategySchema.SPARSE_SHOW_CLICK_DECAY_RATE), KnobUse.any(StrategySchema.SPARSE_NONCLK_COEFF),
                KnobUse.any(StrategySchema.SPARSE_CLICK_COEFF), KnobUse.any(StrategySchema.SPARSE_SHRINK_EVERY_STEPS));
    }
}
