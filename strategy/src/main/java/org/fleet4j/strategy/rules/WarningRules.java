package org.fleet4j.strategy.rules;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.FieldGroup;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * Settings that are accepted but will not act as the user may expect: knobs Fleet4J does not honour
 * yet, GPU-only knobs on CPUs, and settings whose switch is off. Never silently pretended.
 */
final class WarningRules {
    private static final Set<Field<?>> PS_ONLY = Set.of(StrategySchema.PROTOCOL, StrategySchema.TENSOR_FUSE);

    private WarningRules() {
    }

    static List<StrategyWarning> warnings(DistributedStrategy requested, World world) {
        List<StrategyWarning> warnings = new ArrayList<>();
        boolean collective = requested.get(StrategySchema.MODE).equals("collective");
        requested.settings().forEach((field, setting) -> {
            Object value = setting.value();
            if (field.isGpuOnly() && !world.onGpu()) {
                warnings.add(new StrategyWarning(field.key(), value, StrategyWarning.Kind.IGNORED_ON_CPU,
                        "only cuDNN on GPUs reads it, and this world runs on cpu"));
                return;
            }
            FieldGroup group = field.group() == null ? null : StrategySchema.findGroup(field.group()).orElseThrow();
            if (group != null && group.enabledBy() != null && !requested.get(group.enabledBy())) {
                warnings.add(new StrategyWarning(field.key(), value, StrategyWarning.Kind.NO_EFFECT,
                        group.enabledBy().key() + " is off, so the settings of " + group.name() + " are not used"));
            } else if (!value.equals(field.defaultValue()) && !StrategySchema.inEffect(field, value)) {
                warnings.add(new StrategyWarning(field.key(), value, StrategyWarning.Kind.NOT_IN_EFFECT,
                        "accepted and recorded, but the Fleet4J runtime does not act on it yet"));
            }
            if (collective && PS_ONLY.contains(field)) {
                warnings.add(new StrategyWarning(field.key(), value, StrategyWarning.Kind.NO_EFFECT,
                        "only parameter-server mode (mode: ps) uses it, and mode is collective"));
            }
        });
        if (collective && requested.get(StrategySchema.NCCL_COMM_NUM) > 1 && requested.get(StrategySchema.SYNC_NCCL_ALLREDUCE)) {
            warnings.add(new StrategyWarning(StrategySchema.NCCL_COMM_NUM.key(), requested.get(StrategySchema.NCCL_COMM_NUM),
                    StrategyWarning.Kind.ADVICE, "with sync_nccl_allreduce on, the communicators cannot overlap;"
                            + " set sync_nccl_allreduce: false to let them"));
        }
        return warnings;
    }
}
