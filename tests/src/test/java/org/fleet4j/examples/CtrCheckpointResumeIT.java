package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.fleet.metrics.LossCurve;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ctr in sync parameter-server mode (2 servers x 2 workers, lazy Adam) through bin/fleetrun, saving a checkpoint after
 * every epoch: a run killed with kill -9 after a checkpoint exists, then resumed from it, ends where the uninterrupted
 * run ends (every step's loss after the resume, the final test AUC within 0.002); and the uninterrupted run's tables,
 * loaded by 1 server, are identical to those 2 servers saved and test to the same AUC.
 */
class CtrCheckpointResumeIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(4);
    private static final Duration CHECKPOINT_TIMEOUT = Duration.ofMinutes(3);
    private static final String EPOCHS = "3";

    @TempDir
    Path work;

    @Test
    void aKilledRunResumedFromItsCheckpointEndsWhereAnUninterruptedRunEnds() throws Exception {
        Path data = work.resolve("data");
        FleetRunJob gen = FleetRunJob.start(work.resolve("gen"), 1, "ctr_data", "--rows", "4000", "--out", data.toString());
        assertEquals(0, gen.await(Duration.ofSeconds(120)), gen.describe());
        Path strategy = Files.writeString(work.resolve("ps.yaml"), "mode: ps\na_sync: false\n");

        Path whole = work.resolve("whole-ckpt");
        FleetRunJob uninterrupted = ctr(work.resolve("whole"), strategy, 2, 2, data, "--save_checkpoint", whole.toString());
        assertEquals(0, uninterrupted.await(JOB_TIMEOUT), uninterrupted.describe());

        Path killedDir = work.resolve("killed-ckpt");
        FleetRunJob killed = ctr(work.resolve("killed"), strategy, 2, 2, data, "--save_checkpoint", killedDir.toString());
        awaitFile(killedDir.resolve("progress.json"), killed);
        killed.rankProcess(1).destroyForcibly();
        int code = killed.await(JOB_TIMEOUT);
        assertNotEquals(0, code, "the job was to die with its worker:\n" + killed.describe());
        assertTrue(killed.stderr().contains("rank 1 was killed by signal 9"), killed.stderr());
        int savedEpochs = new ObjectMapper().readTree(killedDir.resolve("progress.json").toFile()).get("epochs").asInt();
        assertTrue(savedEpochs >= 1 && savedEpochs < 3, "the kill came after epoch " + savedEpochs);

        FleetRunJob resumed = ctr(work.resolve("resumed"), strategy, 2, 2, data, "--load_checkpoint", killedDir.toString(),
                "--save_checkpoint", killedDir.toString());
        assertEquals(0, resumed.await(JOB_TIMEOUT), resumed.describe());
        assertTrue(Files.readString(resumed.logDir().resolve("workerlog.0")).contains("ctr: resuming after epoch " + savedEpochs),
                resumed.describe());

        // every step after the resume has the uninterrupted run's loss, and the end is the same
        double[] all = LossCurve.readCsv(uninterrupted.logDir().resolve("loss_curve.csv"));
        double[] after = LossCurve.readCsv(resumed.logDir().resolve("loss_curve.csv"));
        assertEquals(all.length * (3 - savedEpochs) / 3, after.length, "steps trained after the resume");
        double[] expected = Arrays.copyOfRange(all, all.length - after.length, all.length);
        for (int i = 0; i < after.length; i++) {
            assertEquals(expected[i], after[i], 1e-4 * Math.abs(expected[i]), "loss of step " + (all.length - after.length + i + 1)
                    + ": resumed " + Arrays.toString(after) + "\nuninterrupted " + Arrays.toString(expected));
        }
        double wholeAuc = summary(uninterrupted).get("auc").asDouble();
        double resumedAuc = summary(resumed).get("auc").asDouble();
        assertEquals(wholeAuc, resumedAuc, 0.002, "final test AUC, resumed against uninterrupted");

        // the 2 servers' tables after the last epoch, loaded by 1 server (and 1 worker), saved again: identical
        Path oneServer = work.resolve("one-server-ckpt");
        FleetRunJob reload = ctr(work.resolve("one-server"), strategy, 1, 1, data, "--load_checkpoint", whole.toString(),
                "--save_checkpoint", oneServer.toString());
        assertEquals(0, reload.await(JOB_TIMEOUT), reload.describe());
        assertTrue(Files.exists(oneServer.resolve("epoch-3/pserver-0-of-1.json")), reload.describe());
        Map<String, List<Float>> two = SavedTables.read(whole.resolve("epoch-3"));
        Map<String, List<Float>> one = SavedTables.read(oneServer.resolve("epoch-3"));
        assertEquals(two.keySet(), one.keySet(), "tables and ids saved by 2 servers and by 1");
        List<String> differ = new ArrayList<>(two.keySet().stream().filter(k -> !two.get(k).equals(one.get(k))).toList());
        assertEquals(List.of(), differ.subList(0, Math.min(5, differ.size())), differ.size() + " entries differ");
        assertEquals(wholeAuc, summary(reload).get("auc").asDouble(), 1e-9, "the reloaded tables test as before");
    }

    private static FleetRunJob ctr(Path dir, Path strategy, int servers, int workers, Path data, String... more)
            throws Exception {
        List<String> args = new ArrayList<>(List.of("--data_dir", data.toString(), "--epochs", EPOCHS, "--batch_size", "128",
                "--seed", "3", "--eval_steps", "1000000"));
        args.addAll(List.of(more));
        return FleetRunJob.start(dir, workers, List.of("--server_num", "" + servers, "--worker_num", "" + workers,
                "--strategy", strategy.toString()), "ctr", args.toArray(String[]::new));
    }

    private static JsonNode summary(FleetRunJob job) throws Exception {
        return new ObjectMapper().readTree(job.logDir().resolve("summary.json").toFile());
    }

    /** Polls for {@code file}; fails naming it when the job ends first or time runs out. */
    private static void awaitFile(Path file, FleetRunJob job) throws Exception {
        long until = System.nanoTime() + CHECKPOINT_TIMEOUT.toNanos();
        while (!Files.exists(file)) {
            if (!job.launcher().isAlive()) {
                throw new AssertionError("the job ended before " + file + " was written:\n" + job.describe());
            }
            if (System.nanoTime() > until) {
                throw new AssertionError(file + " was not written within " + CHECKPOINT_TIMEOUT + ":\n" + job.describe());
            }
            job.launcher().waitFor(20, TimeUnit.MILLISECONDS);
        }
    }
}
