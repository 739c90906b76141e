package org.fleet4j.fleet;

import java.util.Objects;
import org.fleet4j.strategy.rules.EffectiveStrategy;

/** What rank 0 prints at Fleet.init: the world, the settings asked for that are not defaults, and what the world's rules did. */
final class StrategyReport {
    private StrategyReport() {
    }

    static String describe(EffectiveStrategy effective) {
        StringBuilder out = new StringBuilder("fleet: effective strategy for " + effective.world().describe() + ":");
        int before = out.length();
        effective.snapshot().values().forEach((field, value) -> {
            // values the world's rules set are listed below with their reasons
            if (!Objects.equals(field.defaultValue(), value) && !effective.source(field).equals("rule")) {
                out.append("\n  ").append(field.key()).append(" = ").append(value)
                        .append(" (").append(effective.source(field)).append(')');
            }
        });
        if (out.length() == before) {
            out.append(" defaults");
        }
        effective.changes().forEach(c -> out.append("\n  changed by rule: ").append(c));
        effective.warnings().forEach(w -> out.append("\n  warning: ").append(w));
        return out.toString();
    }
}
