package org.fleet4j.fleet.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SummaryTest {
    @TempDir
    Path dir;

    @Test
    void aFigureTheRunDidNotHaveIsJsonNullNotAString() throws IOException {
        Path file = dir.resolve("summary.json");
        new Summary().put("final_loss", Double.NaN).put("samples_per_sec", Double.POSITIVE_INFINITY).put("auc", 0.8)
                .write(file);
        assertEquals("{\n  \"final_loss\" : null,\n  \"samples_per_sec\" : null,\n  \"auc\" : 0.8\n}",
                Files.readString(file).strip());
    }
}
