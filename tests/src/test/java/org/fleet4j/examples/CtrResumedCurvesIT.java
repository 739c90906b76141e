package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a resumed parameter-server ctr reports: its loss curve goes on at the global step the checkpoint was saved
 * after, as its AUC curve does; and a load with every epoch done says that nothing was left to train, with JSON
 * nulls where there is no figure.
 */
class CtrResumedCurvesIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;
    private Path data;
    private Path strategy;
    private Path checkpoint;
    private long stepsPerEpoch;

    private FleetRunJob ctr(String name, String epochs, String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of("--data_dir", data.toString(), "--epochs", epochs, "--batch_size",
                "256", "--eval_steps", "4"));
        args.addAll(List.of(more));
        FleetRunJob job = FleetRunJob.start(work.resolve(name), 1, List.of("--server_num", "1", "--worker_num", "1",
                "--strategy", strategy.toString()), "ctr", args.toArray(String[]::new));
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        return job;
    }

    /** Two epochs of a 1 x 1 sync job, saved after each. */
    @BeforeEach
    void saveTwoEpochs() throws Exception {
        data = work.resolve("data");
        FleetRunJob gen = FleetRunJob.start(work.resolve("gen"), 1, "ctr_data", "--rows", "3000", "--out", data.toString());
        assertEquals(0, gen.await(JOB_TIMEOUT), gen.describe());
        strategy = Files.writeString(work.resolve("ps.yaml"), "mode: ps\na_sync: false\n");
        checkpoint = work.resolve("ck");
        FleetRunJob first = ctr("first", "2", "--save_checkpoint", checkpoint.toString());
        stepsPerEpoch = summary(first).get("steps").asLong() / 2;
        assertTrue(stepsPerEpoch > 4, summary(first).toString());
    }

    private static JsonNode summary(FleetRunJob job) throws Exception {
        return JSON.readTree(job.logDir().resolve("summary.json").toFile());
    }

    /** The step column of loss_curve.csv. */
    private static List<Long> csvSteps(FleetRunJob job) throws Exception {
        List<String> lines = Files.readAllLines(job.logDir().resolve("loss_curve.csv"));
        assertEquals("step,loss", lines.getFirst());
        return lines.subList(1, lines.size()).stream().map(l -> Long.parseLong(l.split(",")[0])).toList();
    }

    @Test
    void aResumedRunsLossCurveGoesOnAtTheGlobalStepAsItsAucCurveDoes() throws Exception {
        FleetRunJob resumed = ctr("resumed", "3", "--load_checkpoint", checkpoint.toString());
        List<Long> steps = csvSteps(resumed);
        List<Long> expected = new ArrayList<>();
        for (long s = 2 * stepsPerEpoch + 1; s <= 3 * stepsPerEpoch; s++) {
            expected.add(s);
        }
        assertEquals(expected, steps, "loss_curve.csv steps of the third epoch");
        JsonNode auc = summary(resumed).get("auc_curve");
        assertTrue(auc.size() > 1, auc.toString());
        for (JsonNode point : auc) {
            assertTrue(point.get(0).asLong() > 2 * stepsPerEpoch && point.get(0).asLong() <= 3 * stepsPerEpoch, auc.toString());
        }
        assertEquals(3 * stepsPerEpoch, auc.get(auc.size() - 1).get(0).asLong(), auc.toString());
    }

    @Test
    void aLoadWithEveryEpochDoneSaysNothingWasLeftToTrainAndWritesNullFigures() throws Exception {
        FleetRunJob done = ctr("done", "2", "--load_checkpoint", checkpoint.toString());
        String log = Files.readString(done.logDir().resolve("workerlog.0"));
        assertTrue(log.contains("nothing was left to train"), log);
        assertFalse(log.contains("NaN"), log);
        JsonNode summary = summary(done);
        assertTrue(summary.get("final_loss").isNull(), summary.toString());
        assertTrue(summary.get("samples_per_sec").isNull(), summary.toString());
        assertTrue(summary.get("auc").isNumber(), "the loaded model is tested: " + summary);
        assertFalse(Files.readString(done.logDir().resolve("summary.json")).contains("NaN"), summary.toString());
    }
}
