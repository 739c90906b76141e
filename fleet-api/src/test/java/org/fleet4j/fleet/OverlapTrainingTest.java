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
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
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
            TrainingRecord programOrder = record(p, "program_order");
            TrainingDrift noise = TrainingDrift.between(programOrder, record(p, OverlapProbe.NOISE));
            for (String config : OverlapProbe.configurations().keySet()) {
                TrainingDrift drift = TrainingDrift.between(programOrder, record(p, config));
                assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), "rank " + r + ", " + config
                        + " against program order: " + drift.summaryAgainst(noise));
            }
            assertEquals(ranks[0].getProperty("program_order.params"), p.getProperty("program_order.params"),
                    "rank " + r + " ends with other parameters than rank 0");
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

    /** The run {@code config} as OverlapProbe recorded it: "name=BITS,... name=..." and "[loss, loss, ...]". */
    private static TrainingRecord record(Properties p, String config) {
        Map<String, float[]> params = new LinkedHashMap<>();
        for (String entry : p.getProperty(config + ".params").split(" ")) {
            String[] bits = entry.substring(entry.indexOf('=') + 1).split(",");
            float[] values = new float[bits.length];
            for (int i = 0; i < bits.length; i++) {
                values[i] = Float.intBitsToFloat(Integer.parseInt(bits[i]));
            }
            params.put(entry.substring(0, entry.indexOf('=')), values);
        }
        String losses = p.getProperty(config + ".losses");
        return new TrainingRecord(params, Arrays.stream(losses.substring(1, losses.length() - 1).split(", "))
                .mapToDouble(Double::parseDouble).toArray());
    }
}
