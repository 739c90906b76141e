package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The compiler's passes name the collective ops through CollectiveOpTypes, as the kernels do. */
class CollectiveOpNamesTest {
    private static final Pattern OP_NAME = Pattern.compile("\"c_[a-z_]+\"");

    /** No pass spells a collective op type itself. */
    @Test
    void noPassSpellsACollectiveOpType() throws IOException {
        List<String> offending = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                List<String> lines = Files.readAllLines(f);
                for (int i = 0; i < lines.size(); i++) {
                    String line = lines.get(i).strip();
                    if (!line.startsWith("*") && !line.startsWith("//") && OP_NAME.matcher(line).find()) {
                        offending.add(f.getFileName() + ":" + (i + 1) + ": " + line);
                    }
                }
            }
        }
        assertEquals(List.of(), offending);
    }
}
