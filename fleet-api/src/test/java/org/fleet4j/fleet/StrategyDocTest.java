package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.FieldGroup;
import org.fleet4j.strategy.schema.StrategySchema;
import org.fleet4j.strategy.schema.ValueKind;
import org.junit.jupiter.api.Test;

/**
 * docs/STRATEGY.md's field reference is rendered from {@link StrategySchema}, so it cannot drift from
 * the code. It lives here, above the compiler and the executor, because its "in effect" column is what they declare
 * they read ({@link StrategySchema#inEffect}). To regenerate it after changing the schema or a knob's readers:
 * {@code ./mvnw -q -pl fleet-api -am test -Dtest=StrategyDocTest -Dsurefire.failIfNoSpecifiedTests=false -Dstrategy.writeDocs=true}
 */
class StrategyDocTest {
    private static final Path DOC = Path.of("..", "docs", "STRATEGY.md");
    private static final String BEGIN = "<!-- field reference: generated from StrategySchema by StrategyDocTest -->\n";
    private static final String END = "<!-- end of field reference -->\n";

    @Test
    void fieldReferenceMatchesTheSchema() throws Exception {
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);
        int begin = doc.indexOf(BEGIN);
        int end = doc.indexOf(END);
        assertTrue(begin >= 0 && end > begin, DOC + " must hold the markers " + BEGIN.strip() + " and " + END.strip());
        String expected = reference();
        String actual = doc.substring(begin + BEGIN.length(), end);
        if (Boolean.getBoolean("strategy.writeDocs")) {
            Files.writeString(DOC, doc.substring(0, begin + BEGIN.length()) + expected + doc.substring(end), StandardCharsets.UTF_8);
            return;
        }
        assertEquals(expected, actual, DOC + " is out of date with StrategySchema; regenerate it with"
                + " ./mvnw -q -pl fleet-api -am test -Dtest=StrategyDocTest -Dsurefire.failIfNoSpecifiedTests=false"
                + " -Dstrategy.writeDocs=true");
    }

    static String reference() {
        StringBuilder out = new StringBuilder();
        out.append("\n### Top-level fields\n\n");
        table(out, StrategySchema.fields().stream().filter(f -> f.group() == null).toList());
        for (FieldGroup group : StrategySchema.groups()) {
            out.append("\n### `").append(group.name()).append("`: ").append(group.doc()).append("\n\n");
            table(out, StrategySchema.fieldsOf(group));
        }
        out.append('\n');
        return out.toString();
    }

    private static void table(StringBuilder out, List<Field<?>> fields) {
        out.append("| key | allowed | default | also spelt | in effect | meaning |\n");
        out.append("| --- | --- | --- | --- | --- | --- |\n");
        for (Field<?> f : fields) {
            out.append("| `").append(f.key()).append("` | ").append(f.allowed())
                    .append(" | `").append(ValueKind.show(f.defaultValue())).append("` | ")
                    .append(String.join(", ", f.aliases().stream().map(a -> "`" + a + "`").toList())).append(" | ")
                    .append(inEffect(f)).append(" | ")
                    .append(f.isGpuOnly() ? "GPU only. " : "").append(f.doc().replace("|", "\\|")).append(" |\n");
        }
    }

    private static String inEffect(Field<?> f) {
        if (f.choices().isEmpty()) {
            return StrategySchema.inEffect(f, f.defaultValue()) ? "yes" : "not yet";
        }
        List<String> honoured = f.choices().stream().filter(c -> StrategySchema.inEffect(f, c)).toList();
        return honoured.size() == f.choices().size() ? "yes" : honoured.isEmpty() ? "not yet" : "for " + String.join(", ", honoured);
    }
}
