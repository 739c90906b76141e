package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.metrics.LossCurve;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ctr program under the real launcher on data from ctr_data. */
class CtrIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(4);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;

    /** Generated data, written by the real {@code fleetrun ctr_data}. */
    private Path data(String name, long rows) throws Exception {
        Path out = work.resolve(name);
        FleetRunJob job = FleetRunJob.start(work.resolve(name + "-job"), 1, "ctr_data", "--rows", "" + rows, "--out",
                out.toString());
        assertEquals(0, job.await(Duration.ofSeconds(120)), job.describe());
        return out;
    }

    private static JsonNode json(Path file) throws IOException {
        return JSON.readTree(file.toFile());
    }

    /**
     * 51,200 training rows, one epoch: the test AUC comes within 0.05 of the planted model's (the best possible, up
     * to the test set's noise of about 0.006 for 5,689 rows). The gap that remains is what 51k rows cannot teach: the
     * Zipf tail's ids are seen a few times each, and ids share hashed rows. It was 0.028 when this test was written
     * and 0.008 with 450k rows (docs/PSERVER.md).
     */
    @Test
    void trainsToAnAucCloseToThePlantedModelsAndWritesTheSummaryAndCurves() throws Exception {
        Path data = data("data", 56_889);
        FleetRunJob job = FleetRunJob.start(work.resolve("run"), 1, "ctr", "--data_dir", data.toString(), "--epochs", "1");
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        JsonNode planted = json(data.resolve(CtrData.PLANTED));
        JsonNode summary = json(job.logDir().resolve("summary.json"));
        double auc = summary.get("auc").asDouble();
        double best = planted.get("planted_auc").asDouble();
        assertTrue(auc > best - 0.05 && auc < best + 0.02, "AUC " + auc + " against the planted " + best);
        assertTrue(summary.get("logloss").asDouble() < planted.get("planted_logloss").asDouble() + 0.05, summary.toString());
        assertTrue(summary.get("samples_per_sec").asDouble() > 0, summary.toString());
        assertEquals("local", summary.get("mode").asText());
        assertEquals("none", summary.get("protocol").asText());
        assertEquals(0, summary.get("servers").asInt());
        assertEquals(1, summary.get("workers").asInt());
        for (String png : List.of("loss_curve.png", "auc_curve.png")) {
            byte[] head = Arrays.copyOf(Files.readAllBytes(job.logDir().resolve(png)), 4);
            assertArrayEquals(new byte[]{(byte) 0x89, 'P', 'N', 'G'}, head, png);
        }
        assertEquals(200, LossCurve.readCsv(job.logDir().resolve("loss_curve.csv")).length);
        // tested every 20 steps: ten points, the last at the end
        assertEquals(10, summary.get("auc_curve").size(), summary.toString());
        assertEquals(200, summary.get("auc_curve").get(9).get(0).asInt());
        assertEquals(auc, summary.get("auc_curve").get(9).get(1).asDouble());
        assertTrue(Files.readString(job.logDir().resolve("workerlog.0")).contains("epoch 1/1 [=============================="),
                job.describe());
    }

    /**
     * Line-stride sharding gives rank r the lines r, r+2, ...: two ranks' batches of 128 are exactly one rank's batch
     * of 256, and averaging the sparse and dense gradients by allreduce makes the steps the same up to float rounding.
     */
    @Test
    void twoRanksWithHalfTheBatchTrainLikeOneRankOnTheGlobalBatch() throws Exception {
        Path data = data("data", 11_378); // 10,240 training rows: 40 full batches of 256
        FleetRunJob one = FleetRunJob.start(work.resolve("one"), 1, "ctr", "--data_dir", data.toString(), "--batch_size", "256");
        assertEquals(0, one.await(JOB_TIMEOUT), one.describe());
        FleetRunJob two = FleetRunJob.start(work.resolve("two"), 2, "ctr", "--data_dir", data.toString(), "--batch_size", "128");
        assertEquals(0, two.await(JOB_TIMEOUT), two.describe());
        double[] a = LossCurve.readCsv(one.logDir().resolve("loss_curve.csv"));
        double[] b = LossCurve.readCsv(two.logDir().resolve("loss_curve.csv"));
        assertEquals(40, a.length);
        assertEquals(40, b.length);
        for (int i = 0; i < a.length; i++) {
            assertEquals(a[i], b[i], 1e-5 * a[i], "loss of step " + (i + 1));
        }
        JsonNode s1 = json(one.logDir().resolve("summary.json"));
        JsonNode s2 = json(two.logDir().resolve("summary.json"));
        assertEquals(s1.get("auc").asDouble(), s2.get("auc").asDouble(), 1e-4);
        assertEquals(2, s2.get("workers").asInt());
        assertTrue(Files.readString(two.logDir().resolve("workerlog.1")).contains("ctr: rank 1 reads 5,120 training rows"
                + " from 1 of 1 file(s) (sharded by line)"), two.describe());
    }

    @Test
    void aMalformedLineEndsTheJobWithCode2NamingFileAndLineUnlessBadLinesAreSkipped() throws Exception {
        Path data = data("data", 1_000);
        Path train = data.resolve("train-00000.txt");
        List<String> lines = new ArrayList<>(Files.readAllLines(train));
        lines.set(6, lines.get(6).replaceFirst("\t", "\tnot-a-number"));
        Files.write(train, lines);

        FleetRunJob bad = FleetRunJob.start(work.resolve("bad"), 1, "ctr", "--data_dir", data.toString(), "--batch_size", "64");
        assertEquals(2, bad.await(JOB_TIMEOUT), bad.describe());
        String log = Files.readString(bad.logDir().resolve("workerlog.0"));
        assertTrue(log.contains("ctr: " + train + ": line 7 integer feature I1 'not-a-number"), bad.describe());
        assertTrue(!log.contains("\tat org.fleet4j"), "no stack trace without --log_level debug\n" + log);

        FleetRunJob skip = FleetRunJob.start(work.resolve("skip"), 1, "ctr", "--data_dir", data.toString(),
                "--batch_size", "64", "--skip_bad_lines");
        assertEquals(0, skip.await(JOB_TIMEOUT), skip.describe());
        assertTrue(Files.readString(skip.logDir().resolve("workerlog.0")).contains("ctr: skipped 1 malformed line(s) of"
                + " rank 0's share; the first: " + train + ": line 7 integer feature I1"), skip.describe());
    }

    @Test
    void aCheckpointSavedByOneRunStartsTheNext() throws Exception {
        Path data = data("data", 2_000);
        Path checkpoint = work.resolve("ctr.safetensors");
        FleetRunJob save = FleetRunJob.start(work.resolve("save"), 1, "ctr", "--data_dir", data.toString(),
                "--batch_size", "64", "--save_checkpoint", checkpoint.toString());
        assertEquals(0, save.await(JOB_TIMEOUT), save.describe());
        FleetRunJob load = FleetRunJob.start(work.resolve("load"), 1, "ctr", "--data_dir", data.toString(),
                "--batch_size", "64", "--load_checkpoint", checkpoint.toString());
        assertEquals(0, load.await(JOB_TIMEOUT), load.describe());
        assertTrue(Files.readString(load.logDir().resolve("workerlog.0"))
                .contains("ctr: loaded the training state from " + checkpoint), load.describe());
        // the second epoch over the same rows starts where the first ended: its first loss is below the fresh start's
        double[] first = LossCurve.readCsv(save.logDir().resolve("loss_curve.csv"));
        double[] resumed = LossCurve.readCsv(load.logDir().resolve("loss_curve.csv"));
        assertTrue(resumed[0] < first[0] - 0.1, "resumed at " + resumed[0] + ", fresh start at " + first[0]);
    }

    @Test
    void badFlagsExitWithCode2AndOneLineNamingTheFlag() {
        assertEquals("ctr: --embedding_dim must be between 8 and 16, got 4",
                ctr(2, "--data_dir", work.toString(), "--embedding_dim", "4"));
        assertEquals("ctr: --optimizer must be sgd, momentum, adam or adagrad, got 'adamax'",
                ctr(2, "--data_dir", work.toString(), "--optimizer", "adamax"));
        assertTrue(ctr(2, "--data_dir", work.resolve("absent").toString())
                .startsWith("ctr: --data_dir " + work.resolve("absent") + " is not a folder"));
        assertTrue(ctr(2, "--data_dir", work.toString()).startsWith("ctr: --data_dir " + work + " has no train* files"));
    }

    private static String ctr(int expectedCode, String... args) {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            assertEquals(expectedCode, ProgramMain.run("ctr", new Ctr(), args));
        } finally {
            System.setErr(saved);
        }
        String text = err.toString(StandardCharsets.UTF_8);
        assertEquals(1, text.lines().count(), text);
        return text.strip();
    }
}
