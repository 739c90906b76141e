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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built-in mnist under the real launcher: N ranks that split each global batch train the same parameters as one
 * rank with the whole batch (every parameter and every step's loss within {@link TrainingDrift#NOISE_FACTOR} times
 * the float32 noise measured at run time), a comparison that catches real mistakes; and a rank killed mid-training
 * fails the job instead of hanging it.
 */
class DataParallelMnistIT {
    private static final Duration JOB_TIMEOUT = MnistEquivalence.JOB_TIMEOUT;
    private static final String[] MNIST_50_STEPS = {"--steps", "50", "--global_batch", "64", "--optimizer", "sgd"};

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

    private static TrainingRecord train(Path dir, String name, int nproc, List<String> launcherArgs, String... extra)
            throws Exception {
        List<String> args = new ArrayList<>(List.of(MNIST_50_STEPS));
        args.addAll(List.of(extra));
        TrainingRecord run = MnistEquivalence.train(dir, name, nproc, launcherArgs, args.toArray(String[]::new));
        Path logDir = dir.resolve(name).resolve("log");
        assertTrue(Files.size(logDir.resolve("loss_curve.png")) > 0);
        JsonNode summary = new ObjectMapper().readTree(logDir.resolve("summary.json").toFile());
        assertEquals(64 / nproc, summary.get("batch_size").asInt());
        assertEquals(50, run.losses().length);
        assertEquals(summary.get("final_loss").asDouble(), run.losses()[49]);
        return run;
    }

    @Test
    void twoAndFourRanksSplittingTheGlobalBatchMatchOneRankWithinTheFloat32Noise() throws Exception {
        // 50 SGD steps move the parameters: agreement is not just two untouched initialisations
        double[] losses = oneRank.losses();
        assertTrue(losses[49] < losses[0] - 1, "the loss falls: " + losses[0] + " -> " + losses[49]);
        assertEquals(6, oneRank.parameters().size(), "3 weights and 3 biases: " + oneRank.parameters().keySet());
        for (int nproc : new int[]{2, 4}) {
            TrainingDrift drift = TrainingDrift.between(oneRank, train(work, "ranks" + nproc, nproc, List.of()));
            assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), nproc + " ranks against one: "
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
            assertFalse(drift.beyond(noise, TrainingDrift.NOISE_FACTOR).isEmpty(), mistake.getKey() + " passed for equivalent: "
                    + drift.summaryAgainst(noise));
        }
    }

    @Test
    void aFreezePatternThatMatchesNoParameterAndANegativePerturbationAreRefusedWithOneLineAndExitCode2() throws Exception {
        String[][] cases = {{"--freeze", "fc_9.*"}, {"--perturb_init_ulps", "-1"}};
        String[] refusals = {"--freeze 'fc_9.*' matches no parameter; the parameters are [fc_0.w_0, fc_0.b_0, fc_1.w_0,",
                "--perturb_init_ulps must be 0 or more, got -1"};
        for (int i = 0; i < cases.length; i++) {
            FleetRunJob job = FleetRunJob.start(work.resolve("refused" + i), 1, "mnist", "--steps", "1", cases[i][0],
                    cases[i][1]);
            assertEquals(2, job.await(JOB_TIMEOUT), job.describe());
            String log = Files.readString(job.logDir().resolve("workerlog.0"));
            assertTrue(log.contains(refusals[i]), job.describe());
            assertFalse(log.contains("\tat "), "one line, no stack trace: " + log);
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

        assertEquals(3, job.await(JOB_TIMEOUT), "a rank killed by a signal is a failed peer: " + job.describe());
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
