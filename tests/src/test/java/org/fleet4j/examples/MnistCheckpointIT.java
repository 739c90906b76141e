package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.fleet4j.core.io.Checkpoint;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** mnist --save_checkpoint on 2 ranks writes the whole training state once; another job loads it, or names what is wrong. */
class MnistCheckpointIT {
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

    @Test
    void aSaveCheckpointPathThatCannotBeWrittenFailsBeforeTrainingWithExitCode2OnOneAndTwoRanks() throws Exception {
        Files.createDirectories(work.resolve("a-directory"));
        // /sys takes no new files from anyone, root included (whom a read-only directory would not stop)
        List<Path> bad = List.of(work.resolve("missing/mnist.safetensors"), work.resolve("a-directory"),
                Path.of("/sys/mnist.safetensors"));
        List<String> expected = List.of("directory " + work.resolve("missing") + " does not exist; create it first",
                "is a directory; name a file in it, e.g. " + work.resolve("a-directory/checkpoint.safetensors"),
                "directory /sys does not let this user create files (permission denied); choose a writable directory");
        for (int ranks = 1; ranks <= 2; ranks++) {
            for (int k = 0; k < bad.size(); k++) {
                if (ranks == 1 && k > 0) {
                    continue; // one rank: the missing directory is enough; the check is the same code
                }
                FleetRunJob job = FleetRunJob.start(work.resolve("bad" + ranks + k), ranks, "mnist", "--steps", "5",
                        "--global_batch", "64", "--save_checkpoint", bad.get(k).toString());
                assertEquals(2, job.await(JOB_TIMEOUT), job.describe());
                // the rank that fails first ends the job (fleetrun stops the others) and fleetrun shows its line
                String line = "mnist: checkpoint " + bad.get(k) + ": " + expected.get(k);
                assertTrue(job.stderr().contains("\n    " + line + "\n"), job.describe());
                for (int r = 0; r < ranks; r++) {
                    String all = Files.readString(job.logDir().resolve("workerlog." + r));
                    assertFalse(all.contains(" training and ") || all.contains("\tat "), "rank " + r + " trained, or"
                            + " printed a stack trace, before the check:\n" + all);
                }
                assertEquals(List.of(), leftovers(bad.get(k)), "the check left files behind");
            }
        }
    }

    @Test
    void aCheckpointHoldingNanIsRefusedNamingTheTensorAndLoadsWithAllowNonfiniteCheckpoint() throws Exception {
        Path checkpoint = work.resolve("mnist.safetensors");
        FleetRunJob save = FleetRunJob.start(work.resolve("save"), 1, "mnist", "--steps", "2", "--global_batch", "64",
                "--save_checkpoint", checkpoint.toString());
        assertEquals(0, save.await(JOB_TIMEOUT), save.describe());
        Checkpoint saved = SafeTensors.readCheckpoint(checkpoint);
        String weight = saved.tensors().keySet().stream().filter(n -> saved.tensors().get(n).rank() == 2).findFirst()
                .orElseThrow();
        Tensor w = saved.tensors().get(weight);
        w.set(Float.NaN, 3, 7);
        SafeTensors.write(checkpoint, saved.tensors(), saved.metadata());

        FleetRunJob refused = FleetRunJob.start(work.resolve("refused"), 1, "mnist", "--steps", "2", "--global_batch", "64",
                "--load_checkpoint", checkpoint.toString());
        assertEquals(2, refused.await(JOB_TIMEOUT), refused.describe());
        long flat = 3 * w.dim(1) + 7;
        assertEquals("mnist: checkpoint " + checkpoint + ": " + weight + " holds NaN at [3, 7] (flat index " + flat
                        + "), so the training that saved it had diverged (a load allowing non-finite values reads it for"
                        + " inspection); nothing was loaded",
                Files.readAllLines(refused.logDir().resolve("workerlog.0")).getLast(), refused.describe());

        // allowed, it loads; training from a NaN weight then stops at the first loss
        FleetRunJob inspected = FleetRunJob.start(work.resolve("inspected"), 1, "mnist", "--steps", "2", "--global_batch",
                "64", "--load_checkpoint", checkpoint.toString(), "--allow_nonfinite_checkpoint");
        assertEquals(1, inspected.await(JOB_TIMEOUT), inspected.describe());
        String log = Files.readString(inspected.logDir().resolve("workerlog.0"));
        assertTrue(log.contains("mnist: loaded the training state from " + checkpoint)
                && log.contains("the loss became NaN at step 1"), inspected.describe());
    }

    /** Files next to {@code target} (or in it, when it is a directory) that a write of it would have made. */
    private static List<Path> leftovers(Path target) throws Exception {
        Path dir = Files.isDirectory(target) ? target : target.getParent();
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().startsWith(".") && f.getFileName().toString().endsWith(".tmp")
                    || f.equals(target) && !Files.isDirectory(f)).toList();
        }
    }
}
