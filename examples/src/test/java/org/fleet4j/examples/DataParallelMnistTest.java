package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built-in mnist under the real launcher: N ranks that split each global batch train the same parameters as one
 * rank with the whole batch, and a rank killed mid-training fails the job instead of hanging it.
 */
class DataParallelMnistTest {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);
    private static final String[] MNIST_50_STEPS = {"--steps", "50", "--global_batch", "64", "--optimizer", "sgd"};

    @TempDir
    Path work;

    private JsonNode summary(String name, int nproc) throws Exception {
        FleetRunJob job = FleetRunJob.start(work.resolve(name), nproc, "mnist", MNIST_50_STEPS);
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        assertTrue(Files.size(job.logDir().resolve("loss_curve.png")) > 0);
        for (int r = 1; r < nproc; r++) {
            assertTrue(Files.readString(job.logDir().resolve("workerlog." + r)).contains("rank 0 evaluates and writes the summary"),
                    job.describe());
        }
        return new ObjectMapper().readTree(job.logDir().resolve("summary.json").toFile());
    }

    @Test
    void twoAndFourRanksSplittingTheGlobalBatchMatchOneRank() throws Exception {
        JsonNode one = summary("one", 1);
        assertEquals(1, one.get("world_size").asInt());
        // 50 SGD steps move the parameters: agreement is not just two untouched initialisations
        assertTrue(one.get("final_loss").asDouble() < 2.0, one.toString());
        for (int nproc : new int[]{2, 4}) {
            JsonNode many = summary("ranks" + nproc, nproc);
            assertEquals(nproc, many.get("world_size").asInt());
            assertEquals(64 / nproc, many.get("batch_size").asInt());
            assertEquals(50, many.get("steps").asInt());
            for (String key : new String[]{"params_l2", "final_loss"}) {
                double a = one.get(key).asDouble();
                double b = many.get(key).asDouble();
                assertTrue(Math.abs(a - b) <= 1e-4 * Math.abs(a), key + ": one rank " + a + ", " + nproc + " ranks " + b);
            }
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
