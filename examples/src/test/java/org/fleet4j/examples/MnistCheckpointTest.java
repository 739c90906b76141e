package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** mnist --save_checkpoint on 2 ranks writes the whole training state once; another job loads it, or names what is wrong. */
class MnistCheckpointTest {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);

    @TempDir
    Path work;

    @Test
    void aTwoRankCheckpointLoadsIntoTheSameTrainingAndIsRefusedByAnotherOptimizer() throws Exception {
        Path checkpoint = work.resolve("mnist.safetensors");
        FleetRunJob save = FleetRunJob.start(work.resolve("save"), 2, "mnist", "--steps", "5", "--global_batch", "64",
                "--optimizer", "momentum", "--save_checkpoint", checkpoint.toString());
        assertEquals(0, save.await(JOB_TIMEOUT), save.describe());
        assertTrue(Files.size(checkpoint) > 4L * 784 * 512, "the checkpoint holds at least the first weight");

        FleetRunJob resume = FleetRunJob.start(work.resolve("resume"), 1, "mnist", "--steps", "2", "--global_batch", "64",
                "--optimizer", "momentum", "--load_checkpoint", checkpoint.toString());
        assertEquals(0, resume.await(JOB_TIMEOUT), resume.describe());
        assertTrue(Files.readString(resume.logDir().resolve("workerlog.0"))
                .contains("mnist: loaded the training state from " + checkpoint), resume.describe());

        // Adam's moments are not in a momentum checkpoint: the load fails naming the file, before training
        FleetRunJob wrong = FleetRunJob.start(work.resolve("wrong"), 1, "mnist", "--steps", "2", "--global_batch", "64",
                "--optimizer", "adam", "--load_checkpoint", checkpoint.toString());
        int code = wrong.await(JOB_TIMEOUT);
        assertEquals(2, code, wrong.describe());
        String log = Files.readString(wrong.logDir().resolve("workerlog.0"));
        assertTrue(log.contains("checkpoint " + checkpoint) && log.contains("moment"), wrong.describe());
    }
}
