package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** docs/LAUNCHER.md's table of the endpoint's metrics names every metric the launcher can answer with. */
class MetricsDocTest {
    private static final Path DOC = Path.of("..", "docs", "LAUNCHER.md");

    @Test
    void everyMetricIsInTheLaunchersDoc() throws Exception {
        String doc = Files.readString(DOC);
        List<String> missing = JobMetrics.names().stream().filter(name -> !doc.contains("`" + name + "{")).toList();
        assertEquals(List.of(), missing, "metrics that " + DOC + " does not list");
    }
}
