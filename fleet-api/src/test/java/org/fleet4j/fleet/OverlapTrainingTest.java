package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real ranks under the launcher train one MLP under every execution strategy of {@link OverlapProbe}: overlapped
 * allreduces, several executor threads, buckets and dropped temporaries all end with the parameters and losses of
 * program order without overlap, on both ranks; the overlapped run's timeline shows allreduces in flight while
 * backward ops run.
 */
class OverlapTrainingTest {
    private static final int STEPS = 8;

    @TempDir
    Path work;

    @Test
    void everyExecutionStrategyTrainsAsProgramOrderOnTwoRanks() throws Exception {
        Path out = Files.createDirectories(work.resolve("out"));
        LaunchedJob job = LaunchedJob.run(work.resolve("job"), 2, Duration.ofSeconds(150), OverlapProbe.class.getName(),
                out.toString(), "" + STEPS);
        assertEquals(0, job.exitCode(), job.describe());
        Properties[] ranks = new Properties[2];
        for (int r = 0; r < 2; r++) {
            ranks[r] = new Properties();
            ranks[r].load(new StringReader(Files.readString(out.resolve("rank-" + r + ".properties"))));
        }
        for (int r = 0; r < 2; r++) {
            Properties p = ranks[r];
            assertTrue(!p.getProperty("program_order.ops").contains("c_allreduce_start"), p.getProperty("program_order.ops"));
            assertTrue(p.getProperty("overlap.ops").contains("c_allreduce_start,"), p.getProperty("overlap.ops"));
            assertTrue(p.getProperty("buckets_overlap_3_threads.ops").contains("gather_bucket,c_allreduce_start"),
                    p.getProperty("buckets_overlap_3_threads.ops"));
            assertEquals("3", p.getProperty("overlap_3_threads.threads"));
            for (String config : OverlapProbe.configurations().keySet()) {
                String where = "rank " + r + ", " + config;
                assertClose(floats(ranks[0].getProperty("program_order.params")), floats(p.getProperty(config + ".params")),
                        where + ": parameters");
                assertClose(list(ranks[r].getProperty("program_order.losses")), list(p.getProperty(config + ".losses")),
                        where + ": losses");
            }
        }
        assertEquals(ranks[0].getProperty("overlap_3_threads.params"), ranks[1].getProperty("overlap_3_threads.params"));
        assertAllreduceInFlightDuringBackward(out.resolve("timeline.rank0.json"));
    }

    /** Some "c_allreduce (in flight)" span contains a whole *_grad op span of another row. */
    private static void assertAllreduceInFlightDuringBackward(Path trace) throws Exception {
        JsonNode events = new ObjectMapper().readTree(trace.toFile()).get("traceEvents");
        List<JsonNode> inFlight = new ArrayList<>();
        List<JsonNode> grads = new ArrayList<>();
        for (JsonNode e : events) {
            if (!"X".equals(e.path("ph").asText())) {
                continue;
            }
            if (e.get("name").asText().equals(Timeline.IN_FLIGHT)) {
                inFlight.add(e);
            } else if (e.get("name").asText().endsWith("_grad")) {
                grads.add(e);
            }
        }
        assertTrue(!inFlight.isEmpty(), "the timeline has in-flight allreduce spans");
        long overlapped = inFlight.stream().filter(a -> grads.stream().anyMatch(g ->
                g.get("tid").asLong() != a.get("tid").asLong() && g.get("ts").asLong() >= a.get("ts").asLong()
                        && g.get("ts").asLong() + g.get("dur").asLong() <= a.get("ts").asLong() + a.get("dur").asLong()))
                .count();
        assertTrue(overlapped > 0, "no backward op ran while an allreduce was in flight: " + inFlight.size() + " spans");
    }

    private static float[] floats(String bits) {
        String[] parts = bits.split(" ");
        float[] out = new float[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = Float.intBitsToFloat(Integer.parseInt(parts[i]));
        }
        return out;
    }

    private static float[] list(String losses) {
        String[] parts = losses.substring(1, losses.length() - 1).split(", ");
        float[] out = new float[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = Float.parseFloat(parts[i]);
        }
        return out;
    }

    private static void assertClose(float[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], actual[i], 1e-6f * Math.max(1f, Math.abs(expected[i])), what + " [" + i + "]");
        }
    }
}
