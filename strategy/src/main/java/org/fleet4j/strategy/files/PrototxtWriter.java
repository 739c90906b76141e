package org.fleet4j.strategy.files;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.Setting;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * Writes a strategy's settings in protobuf text format, as Paddle's {@code save_to_prototxt} does:
 * one {@code key: value} per line, groups as blocks, lists as repeated keys, strings quoted, enum
 * names bare and upper-case.
 */
final class PrototxtWriter {
    private PrototxtWriter() {
    }

    static String write(Map<Field<?>, Setting> settings) {
        StringBuilder out = new StringBuilder("# Fleet4J distributed strategy; docs/STRATEGY.md describes every key\n");
        writeMessage(out, JacksonStrategyWriter.tree(settings), "", "");
        return out.toString();
    }

    @SuppressWarnings("unchecked")
    private static void writeMessage(StringBuilder out, Map<String, Object> message, String prefix, String indent) {
        message.forEach((name, value) -> {
            if (value instanceof Map<?, ?> block) {
                out.append(indent).append(name).append(" {\n");
                writeMessage(out, (Map<String, Object>) block, name + ".", indent + "  ");
                out.append(indent).append("}\n");
                return;
            }
            Field<?> field = StrategySchema.find(prefix + name).orElseThrow();
            if (value instanceof List<?> list) {
                if (list.isEmpty()) {
                    out.append(indent).append(name).append(": []\n");
                }
                list.forEach(item -> out.append(indent).append(name).append(": ").append(scalar(field, item)).append('\n'));
            } else {
                out.append(indent).append(name).append(": ").append(scalar(field, value)).append('\n');
            }
        });
    }

    private static String scalar(Field<?> field, Object value) {
        return switch (field.kind()) {
            case ENUM -> ((String) value).toUpperCase(Locale.ROOT);
            case CHOICE, STRING_LIST -> quoted((String) value);
            default -> String.valueOf(value);
        };
    }

    private static String quoted(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\t' -> out.append("\\t");
                case '\r' -> out.append("\\r");
                default -> out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
