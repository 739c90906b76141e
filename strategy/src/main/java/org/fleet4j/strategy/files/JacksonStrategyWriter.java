package org.fleet4j.strategy.files;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.Setting;

/** Writes the settings of a strategy as YAML or JSON, nested by group. */
final class JacksonStrategyWriter {
    // Strings stay quoted: unquoted, a name like 123 or yes would read back as a number or a boolean.
    private static final ObjectMapper YAML = new ObjectMapper(YAMLFactory.builder()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .build());
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private JacksonStrategyWriter() {
    }

    static String write(StrategyFormat format, Map<Field<?>, Setting> settings) {
        Map<String, Object> tree = tree(settings);
        try {
            return format == StrategyFormat.YAML
                    ? "# Fleet4J distributed strategy; docs/STRATEGY.md describes every key\n"
                            + (tree.isEmpty() ? "{}\n" : YAML.writeValueAsString(tree))
                    : JSON.writeValueAsString(tree) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("writing a strategy as " + format + " failed", e);
        }
    }

    /** The set fields as nested maps: top-level keys, and one map per group in schema order. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> tree(Map<Field<?>, Setting> settings) {
        Map<String, Object> root = new LinkedHashMap<>();
        settings.forEach((field, setting) -> {
            if (field.group() == null) {
                root.put(field.key(), setting.value());
            } else {
                ((Map<String, Object>) root.computeIfAbsent(field.group(), g -> new LinkedHashMap<>()))
                        .put(field.name(), setting.value());
            }
        });
        return root;
    }
}
