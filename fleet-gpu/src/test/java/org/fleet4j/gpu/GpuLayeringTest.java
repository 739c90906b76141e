package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The device layer stands below the user API: its sources name no class of fleet-api, and spell no collective op
 * type, whose names come from ops-fusion's one vocabulary (org.fleet4j.core.ops.collective.CollectiveOpTypes).
 */
class GpuLayeringTest {
    private static final Pattern OP_NAME = Pattern.compile("\"c_[a-z_]+\"");

    @Test
    void gpuSourcesNameNoFleetApiClassAndSpellNoCollectiveOpType() throws IOException {
        List<String> offending = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                List<String> lines = Files.readAllLines(f);
                for (int i = 0; i < lines.size(); i++) {
                    String line = lines.get(i).strip();
                    if (line.startsWith("*") || line.startsWith("//") || line.startsWith("/*")) {
                        continue; // prose may name them
                    }
                    if (line.contains("org.fleet4j.fleet.") || line.contains("org.fleet4j.launch.")
                            || OP_NAME.matcher(line).find()) {
                        offending.add(f.getFileName() + ":" + (i + 1) + ": " + line);
                    }
                }
            }
        }
        assertEquals(List.of(), offending);
    }
}
