package org.fleet4j.strategy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.Origin;
import org.fleet4j.strategy.schema.Setting;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * Combinations of settings that contradict each other whatever the world: checked when a strategy
 * is loaded, validated or resolved. Each problem names the settings and where they were set.
 */
public final class ConsistencyRules {
    /** Knobs of allreduce training and of the meta-optimizers around it, which parameter servers do not run. */
    private static final Set<Field<?>> COLLECTIVE_ONLY = Set.of(StrategySchema.SYNC_NCCL_ALLREDUCE,
            StrategySchema.NCCL_COMM_NUM, StrategySchema.USE_HIERARCHICAL_ALLREDUCE,
            StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS, StrategySchema.SYNC_BATCH_NORM,
            StrategySchema.FUSE_ALL_REDUCE_OPS, StrategySchema.FUSE_GRAD_SIZE_IN_MB,
            StrategySchema.FUSE_GRAD_SIZE_IN_TFLOPS, StrategySchema.LAST_COMM_GROUP_SIZE_MB,
            StrategySchema.FIND_UNUSED_PARAMETERS, StrategySchema.FP16_ALLREDUCE, StrategySchema.GRADIENT_MERGE,
            StrategySchema.LOCALSGD, StrategySchema.DGC, StrategySchema.LARS, StrategySchema.LAMB);
    private static final Set<String> COLLECTIVE_ONLY_GROUPS = Set.of("gradient_merge_configs", "localsgd_configs",
            "dgc_configs", "lars_configs", "lamb_configs");

    private ConsistencyRules() {
    }

    static List<String> problems(DistributedStrategy s) {
        // a_sync defaults to true as in Paddle, so only an explicit a_sync: true asks for asynchronous training.
        List<String> problems = new ArrayList<>();
        if (s.get(StrategySchema.MODE).equals("collective")) {
            List<Field<?>> psOnly = s.settings().keySet().stream()
                    .filter(f -> psOnly(f) && (f != StrategySchema.A_SYNC || s.get(StrategySchema.A_SYNC)))
                    .toList();
            if (!psOnly.isEmpty()) {
                problems.add(at(s, psOnly.getFirst()) + String.join(", ", psOnly.stream().map(Field::key).toList())
                        + (psOnly.size() == 1 ? " applies" : " apply") + " only to mode ps, but mode is collective"
                        + from(s, StrategySchema.MODE) + "; set mode: ps or remove "
                        + (psOnly.size() == 1 ? "it" : "them"));
            }
        }
        if (s.get(StrategySchema.MODE).equals("ps")) {
            // Only a value other than the default asks for something: fuse_all_reduce_ops: true or dgc: false is moot.
            List<Field<?>> collectiveOnly = s.settings().entrySet().stream()
                    .filter(e -> collectiveOnly(e.getKey()))
                    .filter(e -> !e.getValue().value().equals(e.getKey().defaultValue()))
                    .sorted(Comparator.comparingInt((Map.Entry<Field<?>, Setting> e) -> e.getValue().origin().line())
                            .thenComparing(e -> e.getKey().key()))
                    .<Field<?>>map(Map.Entry::getKey)
                    .toList();
            if (!collectiveOnly.isEmpty()) {
                problems.add(at(s, collectiveOnly.getFirst()) + String.join(", ", collectiveOnly.stream().map(Field::key).toList())
                        + (collectiveOnly.size() == 1 ? " applies" : " apply") + " only to mode collective, but mode is ps"
                        + from(s, StrategySchema.MODE) + "; set mode: collective or remove "
                        + (collectiveOnly.size() == 1 ? "it" : "them"));
            }
        }
        if (s.get(StrategySchema.MODE).equals("ps")) {
            int kSteps = s.get(StrategySchema.ASYNC_K_STEPS);
            if (kSteps > 0 && !s.get(StrategySchema.A_SYNC)) {
                problems.add(at(s, StrategySchema.ASYNC_K_STEPS) + "a_sync_configs.k_steps " + kSteps
                        + " asks for geo mode, but a_sync is false" + from(s, StrategySchema.A_SYNC)
                        + "; geo needs a_sync: true (or set k_steps: -1 for sync mode)");
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

    /** Whether a field is a knob of collective training that mode ps rejects when it is set to other than its default. */
    static boolean collectiveOnly(Field<?> field) {
        return COLLECTIVE_ONLY.contains(field) || field.group() != null && COLLECTIVE_ONLY_GROUPS.contains(field.group());
    }

    /** Whether a field is a knob of parameter-server training that mode collective rejects when it is set. */
    static boolean psOnly(Field<?> field) {
        return field == StrategySchema.A_SYNC || "a_sync_configs".equals(field.group())
                || "sparse_table_configs".equals(field.group());
    }

    private static void bothOn(DistributedStrategy s, List<String> problems, Field<Boolean> a, Field<Boolean> b, String why) {
        if (s.get(a) && s.get(b)) {
            problems.add(at(s, b) + a.key() + from(s, a) + " and " + b.key() + from(s, b) + " are both on: " + why);
        }
    }

    /** The error-line prefix of the place where the field was set ("strategy.yaml:3: "), or "". */
    public static String at(DistributedStrategy s, Field<?> field) {
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
