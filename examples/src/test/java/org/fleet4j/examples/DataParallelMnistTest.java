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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.fleet.metrics.LossCurve;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built-in mnist under the real launcher: N ranks that split each global batch train the same parameters as one
 * rank with the whole batch, and a rank killed mid-training fails the job instead of hanging it.
 *
 * <p>"The same" is judged against the float32 noise of this very training, measured at run time: the one-rank job is
 * run again with every initial weight moved one ulp ({@code --perturb_init_ulps 1}), and every parameter tensor (max
 * abs) and every step's loss of the N-rank jobs must stay within {@link #NOISE_FACTOR} times that drift. Measured on
 * 4 seeds (docs/FLEET.md, "How equivalence is tested"), correct 2- and 4-rank jobs stayed within 1.7 times the noise,
 * while the smallest real mistake, a 1% learning-rate error, was 8 times it in the parameters and 52 times in the loss.
 */
class DataParallelMnistTest {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);
    private static final String[] MNIST_50_STEPS = {"--steps", "50", "--global_batch", "64", "--optimizer", "sgd"};
    /** Headroom over the measured noise: 2.3 times the worst correct run, half the smallest mistake (see above). */
    private static final double NOISE_FACTOR = 4;

    @TempDir
    static Path shared;
    private static TrainingRecord oneRank;
    private static TrainingDrift noise;

    @TempDir
    Path work;

    @BeforeAll
    static void trainOneRankAndMeasureItsFloat32Noise() throws Exception {
        oneRank = train(shared, "one", 1, List.of());
        noise = TrainingDrift.between(oneRank, train(shared, "noise", 1, List.of(), "--perturb_init_ulps", "1"));
    }

    /** Runs mnist for 50 steps on {@code nproc} ranks; returns its checkpoint's float tensors and its loss curve. */
    private static TrainingRecord train(Path dir, String name, int nproc, List<String> launcherArgs, String... extra)
            throws Exception {
        Path checkpoint = dir.resolve(name + ".safetensors");
        List<String> args = new ArrayList<>(List.of(MNIST_50_STEPS));
        args.addAll(List.of(extra));
        args.addAll(List.of("--save_checkpoint", checkpoint.toString()));
        FleetRunJob job = FleetRunJob.start(dir.resolve(name), nproc, launcherArgs, "mnist", args.toArray(String[]::new));
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        assertTrue(Files.size(job.logDir().resolve("loss_curve.png")) > 0);
        for (int r = 1; r < nproc; r++) {
            assertTrue(Files.readString(job.logDir().resolve("workerlog." + r)).contains("rank 0 evaluates and writes the summary"),
                    job.describe());
        }
        JsonNode summary = new ObjectMapper().readTree(job.logDir().resolve("summary.json").toFile());
        assertEquals(nproc, summary.get("world_size").asInt());
        assertEquals(64 / nproc, summary.get("batch_size").asInt());
        double[] losses = LossCurve.readCsv(job.logDir().resolve("loss_curve.csv"));
        assertEquals(50, losses.length);
        assertEquals(summary.get("final_loss").asDouble(), losses[49]);
        return TrainingRecord.of(SafeTensors.read(checkpoint), losses);
    }

    @Test
    void twoAndFourRanksSplittingTheGlobalBatchMatchOneRankWithinTheFloat32Noise() throws Exception {
        // 50 SGD steps move the parameters: agreement is not just two untouched initialisations
        double[] losses = oneRank.losses();
        assertTrue(losses[49] < losses[0] - 1, "the loss falls: " + losses[0] + " -> " + losses[49]);
        assertEquals(6, oneRank.parameters().size(), "3 weights and 3 biases: " + oneRank.parameters().keySet());
        for (int nproc : new int[]{2, 4}) {
            TrainingDrift drift = TrainingDrift.between(oneRank, train(work, "ranks" + nproc, nproc, List.of()));
            assertEquals(List.of(), drift.beyond(noise, NOISE_FACTOR), nproc + " ranks against one: "
                    + drift.summaryAgainst(noise) + "; the noise run drifted " + noise.parameters());
        }
    }

    /** Each mistake a data-parallel implementation could make is caught by the same comparison, on the same 2 ranks. */
    @Test
    void summedGradientsAOnePercentLearningRateErrorAndASkippedBiasUpdateAreEachCaught() throws Exception {
        Path sum = Files.writeString(work.resolve("sum.yaml"), "gradient_scale_configs:\n  scale_strategy: sum\n");
        Map<String, TrainingRecord> mistakes = new LinkedHashMap<>();
        mistakes.put("summed instead of averaged gradients", train(work, "summed", 2, List.of("--strategy", sum.toString())));
        mistakes.put("a 1% learning-rate error", train(work, "lr", 2, List.of(), "--lr", "0.0505"));
        mistakes.put("a skipped bias update", train(work, "frozen", 2, List.of(), "--freeze", ".*\\.b_0"));
        for (var mistake : mistakes.entrySet()) {
            TrainingDrift drift = TrainingDrift.between(oneRank, mistake.getValue());
            assertFalse(drift.beyond(noise, NOISE_FACTOR).isEmpty(), mistake.getKey() + " passed for equivalent: "
                    + drift.summaryAgainst(noise));
        }
    }

    @Test
    void killingOneRankMidTrainingFailsTheJobNamingTheRank() throws Exception {
        FleetRunJob job = FleetRunJob.start(work.resolve("kill"), 2, "mnist", "--steps", "100000", "--global_batch", "64");
        Path rank1Log = job.logDir().resolve("workerlog.1");
        long deadline = System.nanoTime() + JOB_TIMEOUT.toNanos();
        // training has begun once rank 1 reports a step
        while (!Files.exists(rank1Log) || !Files.readString(rank1Log).contains("loss ")) {
            assertTrue(job.launcher().isAlive(), "fleetrun ended before training began\n" + job.describe());
            assertTrue(System.nanoTime() < deadline, "rank 1 reported no training step within " + JOB_TIMEOUT + "\n" + job.describe());
            Thread.sleep(50);
        }
        ProcessHandle rank1 = job.rankProcess(1);
        assertTrue(new ProcessBuilder("kill", "-9", "" + rank1.pid()).start().waitFor() == 0);

        assertEquals(137, job.await(JOB_TIMEOUT), job.describe());
        assertTrue(job.stderr().contains("rank 1 was killed by signal 9"), job.describe());
        assertFalse(job.launcher().descendants().findAny().isPresent(), "the job left processes behind");
    }

    @Test
    void aGlobalBatchThatDoesNotSplitEvenlyIsRefusedWithOneLineAndExitCode2() throws Exception {
        FleetRunJob job = FleetRunJob.start(work.resolve("uneven"), 2, "mnist", "--steps", "1", "--global_batch", "65");
        assertEquals(2, job.await(JOB_TIMEOUT), job.describe());
        // every rank refuses, but the launcher stops the others as soon as the first one exits, so only the
        // first is sure to have written its refusal: look in every rank's log
        String refusal = "mnist: --global_batch 65 does not split evenly over 2 ranks; use a multiple of 2";
        boolean refused = false;
        for (int rank = 0; rank < 2; rank++) {
            Path log = job.logDir().resolve("workerlog." + rank);
            String text = Files.exists(log) ? Files.readString(log) : "";
            if (text.contains(refusal)) {
                refused = true;
                assertFalse(text.contains("\tat "), "one line, no stack trace: " + text);
            }
        }
        assertTrue(refused, job.describe());
        assertTrue(job.stderr().contains("exited with code 2"), job.describe());
    }
}
