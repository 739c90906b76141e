package org.fleet4j.pserver.compile;

import java.util.ArrayList;
import java.util.List;
import org.fleet4j.pserver.table.RowAdmission;
import org.fleet4j.pserver.table.RowEviction;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.schema.StrategySchema;
import org.fleet4j.text.Quoted;

/**
 * The strategy's {@code sparse_table_configs} as the servers' tables take them: one admission filter and one set of
 * eviction rules, for the tables {@code table_names} lists (every sparse table when it lists none), as Paddle's
 * {@code sparse_table_configs} gives each named table its accessor settings.
 */
record SparseTableRules(List<String> tables, RowAdmission admission, RowEviction eviction) {
    static SparseTableRules of(DistributedStrategy strategy) {
        String filter = strategy.get(StrategySchema.SPARSE_FILTER);
        int freq = strategy.get(StrategySchema.SPARSE_FILTER_FREQ);
        if ((filter.equals("counter") || filter.equals("cbf")) && freq < 1) {
            throw new PsCompileException("sparse_table_configs.filter " + filter + " admits an id at its filter_freq-th"
                    + " sighting, but sparse_table_configs.filter_freq is " + freq + "; set it to 1 or more");
        }
        if (filter.equals("cbf") && freq > 255) {
            throw new PsCompileException("sparse_table_configs.filter cbf counts in 8-bit counters, so filter_freq must"
                    + " be at most 255, got " + freq + "; use filter counter for higher counts");
        }
        RowAdmission admission = switch (filter) {
            case "counter" -> new RowAdmission.Counter(freq);
            case "probability" -> new RowAdmission.Probability(strategy.get(StrategySchema.SPARSE_ADMIT_PROBABILITY));
            case "cbf" -> new RowAdmission.CountingBloom(freq, strategy.get(StrategySchema.SPARSE_MAX_ELEMENT_SIZE),
                    strategy.get(StrategySchema.SPARSE_FALSE_POSITIVE_PROBABILITY));
            default -> new RowAdmission.Everyone();
        };
        RowEviction eviction = new RowEviction(strategy.get(StrategySchema.SPARSE_STEPS_TO_LIVE),
                strategy.get(StrategySchema.SPARSE_L2_WEIGHT_THRESHOLD), strategy.get(StrategySchema.SPARSE_DELETE_THRESHOLD),
                strategy.get(StrategySchema.SPARSE_DELETE_AFTER_UNSEEN_DAYS),
                strategy.get(StrategySchema.SPARSE_SHOW_CLICK_DECAY_RATE), strategy.get(StrategySchema.SPARSE_NONCLK_COEFF),
                strategy.get(StrategySchema.SPARSE_CLICK_COEFF), strategy.get(StrategySchema.SPARSE_SHRINK_EVERY_STEPS));
        return new SparseTableRules(strategy.get(StrategySchema.SPARSE_TABLE_NAMES), admission, eviction);
    }

    /** The program's sparse tables with these rules on those named; a name that is not a sparse table is refused. */
    List<SparseTableConfig> apply(List<SparseTableConfig> sparse) {
        List<String> names = sparse.stream().map(SparseTableConfig::name).toList();
        for (String t : tables) {
            if (!names.contains(t)) {
                throw new PsCompileException("sparse_table_configs.table_names names " + Quoted.of(t) + ", which is not"
                        + " a sparse table of the program; its sparse tables are " + names);
            }
        }
        List<SparseTableConfig> out = new ArrayList<>();
        for (SparseTableConfig c : sparse) {
            out.add(tables.isEmpty() || tables.contains(c.name()) ? c.withRows(admission, eviction) : c);
        }
        return out;
    }
}
