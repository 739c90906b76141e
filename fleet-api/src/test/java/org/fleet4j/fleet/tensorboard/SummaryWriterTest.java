package org.fleet4j.fleet.tensorboard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Event files checked against tfevents.py, an encoder and reader of the format written apart from this one. */
class SummaryWriterTest {
    @TempDir
    Path dir;

    @Test
    void scalarEventsAreTheBytesAnIndependentEncoderWrites() throws Exception {
        Path file;
        try (SummaryWriter w = SummaryWriter.open(dir)) {
            w.addScalar("train/loss", 2.302585, 1, 1_700_000_000.25);
            w.addScalar("train/learning_rate", 0.05, 1L << 40, 1_700_000_001.5);
            w.addScalar("test/auc", 0.0, 0, 1_700_000_002.0);
            w.addScalar("ps/keys_per_sec", -1.5e9, -3, 1_700_000_003.0);
            file = w.file();
        }
        byte[] expected = TfEventsPy.encode("""
                [{"wall_time": 1700000000.25, "step": 1, "tag": "train/loss", "value": 2.302585},
                 {"wall_time": 1700000001.5, "step": 1099511627776, "tag": "train/learning_rate", "value": 0.05},
                 {"wall_time": 1700000002.0, "step": 0, "tag": "test/auc", "value": 0.0},
                 {"wall_time": 1700000003.0, "step": -3, "tag": "ps/keys_per_sec", "value": -1.5e9}]""");
        byte[] written = Files.readAllBytes(file);
        // the file version comes first, at the time the file was opened
        int first = 8 + 4 + (int) ByteBuffer.wrap(written, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong() + 4;
        assertArrayEquals(expected, Arrays.copyOfRange(written, first, written.length));
    }

    @Test
    void theFileVersionComesFirstAndThePythonReaderReadsBackEveryScalar() throws Exception {
        double before = System.currentTimeMillis() / 1000.0;
        List<String> expected = new ArrayList<>();
        Path file;
        try (SummaryWriter w = SummaryWriter.open(dir.resolve("run/a"))) {
            for (int step = 1; step <= 100; step++) {
                w.addScalar("train/loss", 1.0 / step, step);
                w.addScalar("train/samples_per_sec", 1234.5 * step, step);
                expected.add("train/loss " + step + " " + (float) (1.0 / step));
                expected.add("train/samples_per_sec " + step + " " + (float) (1234.5 * step));
            }
            file = w.file();
        }
        assertTrue(file.getFileName().toString().matches("events\\.out\\.tfevents\\.\\d{10}\\.[^/]+"), file.toString());
        assertEquals(dir.resolve("run/a"), file.getParent());
        List<JsonNode> events = TfEventsPy.read(file);
        JsonNode version = events.getFirst();
        assertEquals(SummaryWriter.FILE_VERSION, version.get("file_version").asText(), version.toString());
        assertTrue(version.get("wall_time").asDouble() >= before - 1, version.toString());
        List<String> read = events.subList(1, events.size()).stream()
                .map(e -> e.get("tag").asText() + " " + e.get("step").asLong() + " " + (float) e.get("value").asDouble())
                .toList();
        assertEquals(expected, read);
    }

    @Test
    void threadsWritingAtOnceLoseNoRecordAndBreakNone() throws Exception {
        int threads = 4;
        int each = 500;
        Path file;
        try (SummaryWriter w = SummaryWriter.open(dir)) {
            List<Thread> started = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String tag = "thread" + t;
                started.add(Thread.ofPlatform().start(() -> {
                    for (int step = 0; step < each; step++) {
                        w.addScalar(tag, step, step);
                    }
                }));
            }
            for (Thread t : started) {
                assertTrue(t.join(Duration.ofSeconds(60)), t + " did not finish within 60 s");
            }
            file = w.file();
        }
        Set<String> seen = new HashSet<>();
        for (JsonNode e : TfEventsPy.read(file).subList(1, threads * each + 1)) {
            assertEquals(e.get("step").asDouble(), e.get("value").asDouble(), e.toString());
            seen.add(e.get("tag").asText() + "@" + e.get("step").asLong());
        }
        assertEquals(threads * each, seen.size());
    }

    @Test
    void recordsReachTheFileWithinTheFlushIntervalWithoutAFlushCall() throws Exception {
        try (SummaryWriter w = SummaryWriter.open(dir, Duration.ofMillis(20))) {
            long opened = Files.size(w.file());
            w.addScalar("train/loss", 0.5, 1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (Files.size(w.file()) == opened) {
                assertTrue(System.nanoTime() < deadline, "the record was not flushed to " + w.file() + " within 30 s");
                Thread.onSpinWait();
            }
            assertEquals("train/loss", TfEventsPy.read(w.file()).get(1).get("tag").asText());
        }
    }

    @Test
    void twoWritersOfOneFolderWriteTwoFiles() throws Exception {
        try (SummaryWriter a = SummaryWriter.open(dir); SummaryWriter b = SummaryWriter.open(dir)) {
            assertNotEquals(a.file(), b.file());
            assertTrue(b.file().getFileName().toString().startsWith("events.out.tfevents."), b.file().toString());
        }
    }

    @Test
    void aClosedWriterRefusesScalarsNamingItsFileAndAnEmptyTagIsRefused() throws Exception {
        SummaryWriter w = SummaryWriter.open(dir);
        assertEquals("a TensorBoard scalar needs a tag (a name such as train/loss), got ''",
                assertThrows(IllegalArgumentException.class, () -> w.addScalar("", 1, 1)).getMessage());
        w.close();
        w.close();
        assertEquals("the TensorBoard event file " + w.file() + " is closed",
                assertThrows(IllegalStateException.class, () -> w.addScalar("train/loss", 1, 1)).getMessage());
    }
}
