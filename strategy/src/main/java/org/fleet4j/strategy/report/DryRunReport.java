package org.fleet4j.strategy.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.TextTable;
import org.fleet4j.strategy.schema.ValueKind;

/** Prints an effective strategy for people (a table) or for programs (one JSON object). */
final class DryRunReport {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private DryRunReport() {
    }

    /** The world, every field (key, value, source, note), then the changes and warnings in full. */
    static String table(EffectiveStrategy effective) {
        StringBuilder out = new StringBuilder("world: " + effective.world().describe() + "\n\n");
        TextTable table = new TextTable("KEY", "VALUE", "SOURCE", "NOTE");
        effective.snapshot().values().forEach((field, value) ->
                table.row(field.key(), ValueKind.show(value), effective.source(field), effective.note(field)));
        out.append(table.render());
        out.append("\nchanges by rule:").append(effective.changes().isEmpty() ? " none\n" : "\n");
        effective.changes().forEach(c -> out.append("  ").append(c).append('\n'));
        out.append("warnings:").append(effective.warnings().isEmpty() ? " none\n" : "\n");
        effective.warnings().forEach(w -> out.append("  ").append(w).append('\n'));
        return out.toString();
    }

    /**
     * {@code {"world": {...}, "effective": {KEY: VALUE}, "changes": [{key, from, to, reason}],
     * "warnings": [{key, value, kind, reason}]}} with dotted keys for nested fields.
     */
    static String json(EffectiveStrategy effective) {
        World world = effective.world();
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("world", ordered("nodes", world.nodes(), "ranks_per_node", world.ranksPerNode(),
                "world_size", world.size(), "device", world.device()));
        Map<String, Object> values = new LinkedHashMap<>();
        effective.snapshot().values().forEach((field, value) -> values.put(field.key(), value));
        root.put("effective", values);
        root.put("changes", effective.changes().stream().map(c -> ordered(
                "key", c.key(), "from", c.from(), "to", c.to(), "reason", c.reason())).toList());
        root.put("warnings", effective.warnings().stream().map(w -> ordered(
                "key", w.key(), "value", w.value(), "kind", w.kind().label(), "reason", w.reason())).toList());
        try {
            return JSON.writeValueAsString(root) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("writing the effective strategy as JSON failed", e);
        }
    }

    private static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }

    static List<String> formats() {
        return List.of("table", "json");
    }
}
