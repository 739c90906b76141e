package org.fleet4j.strategy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Combinations of settings that contradict each other whatever the world: checked when a strategy
 * is loaded, validated or resolved. Each problem names the settings and where they were set.
 */
final class ConsistencyRules {
    private ConsistencyRules() {
    }

    static List<String> problems(DistributedStrategy s) {
        // a_sync defaults to true as in Paddle, so only an explicit a_sync: true asks for asynchronous training.
        List<String> problems = new ArrayList<>();
        if (s.get(StrategySchema.MODE).equals("collective")) {
            List<Field<?>> psOnly = s.settings().keySet().stream()
                    .filter(f -> f == StrategySchema.A_SYNC && s.get(StrategySchema.A_SYNC) || "a_sync_configs".equals(f.group()))
                    .toList();
            if (!psOnly.isEmpty()) {
                problems.add(at(s, psOnly.getFirst()) + String.join(", ", psOnly.stream().map(Field::key).toList())
                        + (psOnly.size() == 1 ? " applies" : " apply") + " only to mode ps, but mode is collective"
                        + from(s, StrategySchema.MODE) + "; set mode: ps or remove "
                        + (psOnly.size() == 1 ? "it" : "them"));
            }
        }
        bothOn(s, problems, StrategySchema.LARS, StrategySchema.LAMB,
                "a job has one optimizer, so choose LARS or LAMB");
        bothOn(s, problems, StrategySchema.SYNC_BATCH_NORM, StrategySchema.GRADIENT_MERGE,
                "Fleet4J synchronises batch-norm statistics on every step, while gradient merge runs k_steps"
                        + " steps without communication; turn one off");
        bothOn(s, problems, StrategySchema.LOCALSGD, StrategySchema.GRADIENT_MERGE,
                "local SGD already skips communication between its averaging steps; turn one off");
        bothOn(s, problems, StrategySchema.LOCALSGD, StrategySchema.DGC,
                "local SGD averages parameters, DGC compresses gradient allreduces; turn one off");
        bothOn(s, problems, StrategySchema.DGC, StrategySchema.FP16_ALLREDUCE,
                "DGC sends sparse gradients and cannot also cast them to fp16; turn one off");
        if (s.get(StrategySchema.RECOMPUTE) && s.get(StrategySchema.RECOMPUTE_CHECKPOINTS).isEmpty()) {
            problems.add(at(s, StrategySchema.RECOMPUTE) + "recompute is on but recompute_configs.checkpoints is empty;"
                    + " name the variables to keep, e.g. checkpoints: [fc_0.tmp_0, fc_1.tmp_0]");
        }
        Set<String> both = new HashSet<>(s.get(StrategySchema.AMP_CUSTOM_WHITE_LIST));
        both.retainAll(s.get(StrategySchema.AMP_CUSTOM_BLACK_LIST));
        if (!both.isEmpty()) {
            problems.add(at(s, StrategySchema.AMP_CUSTOM_BLACK_LIST) + "amp_configs.custom_white_list and"
                    + " amp_configs.custom_black_list both name " + both.stream().sorted().toList()
                    + "; an op runs in one precision, so list it once");
        }
        return problems;
    }

    private static void bothOn(DistributedStrategy s, List<String> problems, Field<Boolean> a, Field<Boolean> b, String why) {
        if (s.get(a) && s.get(b)) {
            problems.add(at(s, b) + a.key() + from(s, a) + " and " + b.key() + from(s, b) + " are both on: " + why);
        }
    }

    /** The error-line prefix of the place where the field was set ("strategy.yaml:3: "), or "". */
    static String at(DistributedStrategy s, Field<?> field) {
        Setting setting = s.settings().get(field);
        return setting == null ? "" : setting.origin().prefix();
    }

    /** " (line 3)", " (set in code)" or " (the default)": where a value in a sentence came from. */
    static String from(DistributedStrategy s, Field<?> field) {
        Setting setting = s.settings().get(field);
        if (setting == null) {
            return " (the default)";
        }
        Origin origin = setting.origin();
        return !origin.fromFile() ? " (set in code)" : origin.line() > 0 ? " (line " + origin.line() + ")" : "";
    }
}
