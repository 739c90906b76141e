package org.fleet4j.fleet.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.fleet.tensorboard.SummaryWriter;
import org.fleet4j.fleet.tensorboard.TfEventsPy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A step's figures on a clock the test moves: to TensorBoard and to the launcher's metrics file. */
class StepMetricsTest {
    private static final long MS = 1_000_000;

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(1_000 * MS);
    private final CommunicationTimes communication = new CommunicationTimes(now::get);

    private void op(String type, long ms) {
        communication.opStarted(7, type);
        now.addAndGet(ms * MS);
        communication.opFinished(7, type);
    }

    @Test
    void aStepsFiguresGoToTensorBoardAndToTheLaunchersFile() throws Exception {
        Path file = dir.resolve("workermetrics.0");
        SummaryWriter tensorboard = SummaryWriter.open(dir.resolve("tb"));
        RankMetrics rank = RankMetrics.fromEnvironment(Map.of(RankMetrics.FILE_ENV, file.toString()));
        try (StepMetrics m = new StepMetrics(tensorboard, rank, communication, now::get)
                .learningRate(LrSchedule.stepDecay(0.1, 1, 0.5))) {
            m.stepStarted();
            op("mul", 10);
            op("c_allreduce", 5);
            op("c_wait", 1);
            m.stepFinished(1, 2.5, 64, 128);
            op("c_allreduce", 100); // between steps (a test, a save): not the next step's
            m.stepStarted();
            op("pull_sparse", 3);
            op("mul", 30);
            op("push_sparse", 7);
            m.stepFinished(2, 1.5, 64, 128);
            m.scalar("test/auc", 0.75, 2);
        }
        assertEquals(2, rank.value(RankMetric.STEPS));
        assertEquals(128, rank.value(RankMetric.SAMPLES));
        assertEquals(0.040, rank.value(RankMetric.STEP_SECONDS), 1e-12);
        assertEquals(0.056, rank.value(RankMetric.STEP_SECONDS_TOTAL), 1e-12);
        assertEquals(1600, rank.value(RankMetric.SAMPLES_PER_SECOND), 1e-9);
        assertEquals(1.5, rank.value(RankMetric.LOSS));
        assertEquals(0, rank.value(RankMetric.ALLREDUCE_SECONDS), 1e-12);
        assertEquals(0.006, rank.value(RankMetric.ALLREDUCE_SECONDS_TOTAL), 1e-12);
        assertEquals(0.003, rank.value(RankMetric.PS_PULL_SECONDS), 1e-12);
        assertEquals(0.007, rank.value(RankMetric.PS_PUSH_SECONDS_TOTAL), 1e-12);
        assertEquals(rank.render(), Files.readString(file), "closing writes the last figures");

        Map<String, Float> scalars = new TreeMap<>();
        for (JsonNode e : TfEventsPy.read(Files.list(dir.resolve("tb")).findFirst().orElseThrow()).subList(1, 14)) {
            scalars.put(e.get("step").asLong() + " " + e.get("tag").asText(), (float) e.get("value").asDouble());
        }
        Map<String, Float> expected = new TreeMap<>(Map.ofEntries(
                Map.entry("1 train/step_time_ms", 16f), Map.entry("1 train/loss", 2.5f),
                Map.entry("1 train/learning_rate", 0.1f), Map.entry("1 train/samples_per_sec", 8000f),
                Map.entry("1 train/allreduce_ms", 6f),
                Map.entry("2 train/step_time_ms", 40f), Map.entry("2 train/loss", 1.5f),
                Map.entry("2 train/learning_rate", 0.05f), Map.entry("2 train/samples_per_sec", 3200f),
                Map.entry("2 train/allreduce_ms", 0f), Map.entry("2 train/ps_pull_ms", 3f),
                Map.entry("2 train/ps_push_ms", 7f), Map.entry("2 test/auc", 0.75f)));
        assertEquals(expected.keySet(), scalars.keySet());
        expected.forEach((key, value) -> assertEquals(value, scalars.get(key), 1e-4f, key));
    }

    @Test
    void aProgramWithoutCommunicationOpsGetsNoCommunicationFigures() throws Exception {
        RankMetrics rank = RankMetrics.fromEnvironment(Map.of(RankMetrics.FILE_ENV, dir.resolve("workermetrics.1").toString()));
        try (StepMetrics m = new StepMetrics(null, rank, communication, now::get)) {
            op("mul", 4);
            m.stepFinished(1, Double.NaN, 0, 0);
        }
        assertEquals(0.004, rank.value(RankMetric.STEP_SECONDS), 1e-12, "from the metrics' start without stepStarted");
        assertTrue(Double.isNaN(rank.value(RankMetric.ALLREDUCE_SECONDS)));
        assertTrue(Double.isNaN(rank.value(RankMetric.LOSS)));
        assertTrue(Double.isNaN(rank.value(RankMetric.SAMPLES_PER_SECOND)));
    }

    @Test
    void withNeitherTensorBoardNorALauncherNothingIsKept() {
        RankMetrics rank = RankMetrics.fromEnvironment(Map.of());
        try (StepMetrics m = new StepMetrics(null, rank, null, now::get)) {
            assertFalse(m.wanted());
            m.stepStarted();
            m.stepFinished(1, 0.5, 64, 64);
        }
        assertFalse(rank.reporting());
        assertTrue(Double.isNaN(rank.value(RankMetric.STEPS)));
    }
}
