package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ctr through the real bin/fleetrun with 2 servers x 4 workers in async, half-async and geo modes: each reaches a
 * test AUC within 0.01 of the single-process run on the same data and within 0.02 of the planted model's.
 * {@value #ROWS} generated rows, not the 1M, which take too long for CI on 2 cores ({@code
 * scripts/bench/ps_modes_auc.sh} runs 1M; docs/PERFORMANCE.md has both). Not fewer: at 200,000 one process is 0.013 from
 * the planted model, and async, whose AUC varies from run to run with the timing of its stale updates, came within
 * 0.0018 of the 0.02 bound in CI and past it in 1 of 5 runs on an idle 2-core machine (0.8120 against the planted
 * 0.8334). At 300,000 one process is 0.009 from it and async 0.010-0.013 in seven runs, each mode's job about as long
 * as at 200,000 (its time is mostly six JVMs starting and compiling). Adagrad at lr 0.03, not 0.05: async applies
 * each gradient to values that moved since it was computed, by an amount that grows with lr and varies with the
 * machine's timing; at 0.05 async came 0.0006-0.0224 from one process in 21 runs (2026-11-29; 1 past the bound), at
 * 0.03 0.0005-0.0025 in 17 (mean 0.0013, standard deviation 0.0006), one process reaching the same AUC (0.8247
 * against 0.8244). docs/PSERVER.md, "Async and the learning rate", has the rest.
 * ctr tests the model the servers hold after a {@code barrierWorker} (every worker's updates applied). Async and
 * half-async take batches of 512 per worker, as many rows per update as the single process; geo takes 128 per worker,
 * since its servers move by the average of the 4 workers' local steps.
 */
class PsModesAucIT {
    static final int ROWS = 300_000;
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(8);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int BATCH = 512;
    private static final int WORKERS = 4;
    private static final List<String> CTR = List.of("--optimizer", "adagrad", "--lr", "0.03", "--eval_steps", "100000");

    @TempDir
    static Path work;
    private static Path data;
    private static double plantedAuc;
    private static double localAuc;

    @BeforeAll
    static void dataAndTheSingleProcessRun() throws Exception {
        data = work.resolve("data");
        FleetRunJob gen = FleetRunJob.start(work.resolve("gen"), 1, "ctr_data", "--rows", "" + ROWS, "--out",
                data.toString());
        assertEquals(0, gen.await(Duration.ofMinutes(2)), gen.describe());
        plantedAuc = JSON.readTree(data.resolve(CtrData.PLANTED).toFile()).get("planted_auc").asDouble();
        FleetRunJob local = FleetRunJob.start(work.resolve("local"), 1, "ctr", args(BATCH));
        assertEquals(0, local.await(JOB_TIMEOUT), local.describe());
        localAuc = JSON.readTree(local.logDir().resolve("summary.json").toFile()).get("auc").asDouble();
    }

    private static String[] args(int batch) {
        List<String> all = new ArrayList<>(List.of("--data_dir", data.toString(), "--batch_size", "" + batch));
        all.addAll(CTR);
        return all.toArray(String[]::new);
    }

    private static JsonNode train(String mode, String strategy, int batch) throws Exception {
        Path yaml = Files.writeString(work.resolve(mode + ".yaml"), "mode: ps\na_sync: true\n" + strategy);
        FleetRunJob job = FleetRunJob.start(work.resolve(mode), WORKERS, List.of("--server_num", "2", "--worker_num",
                "" + WORKERS, "--strategy", yaml.toString()), "ctr", args(batch));
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        JsonNode summary = JSON.readTree(job.logDir().resolve("summary.json").toFile());
        assertEquals("ps-" + mode, summary.get("mode").asText());
        assertEquals(2, summary.get("servers").asInt());
        assertEquals(WORKERS, summary.get("workers").asInt());
        double auc = summary.get("auc").asDouble();
        String what = mode + ": AUC " + auc + ", single process " + localAuc + ", planted " + plantedAuc;
        System.out.println(what);
        assertTrue(Math.abs(auc - localAuc) <= 0.01, what);
        assertTrue(plantedAuc - auc <= 0.02, what);
        return summary;
    }

    @Test
    void asyncComesWithinAHundredthOfOneProcess() throws Exception {
        train("async", "a_sync_configs:\n  runtime_split_send_recv: true\n  max_merge_var_num: 4\n  thread_pool_size: 2\n", BATCH);
    }

    @Test
    void halfAsyncComesWithinAHundredthOfOneProcess() throws Exception {
        train("half-async", "a_sync_configs:\n  thread_pool_size: 2\n", BATCH);
    }

    @Test
    void geoComesWithinAHundredthOfOneProcess() throws Exception {
        train("geo", "a_sync_configs:\n  k_steps: 8\n  thread_pool_size: 4\n", BATCH / WORKERS);
    }

    @Test
    void dryRunPrintsTheModeAndItsCommunicatorsSettings() throws Exception {
        Path yaml = Files.writeString(work.resolve("dry.yaml"), "mode: ps\na_sync: true\na_sync_configs:\n"
                + "  runtime_split_send_recv: true\n  max_merge_var_num: 3\n  send_queue_size: 5\n");
        FleetRunJob dry = FleetRunJob.start(work.resolve("dry"), WORKERS, List.of("--dry_run", "--server_num", "2",
                "--worker_num", "" + WORKERS, "--strategy", yaml.toString()), "ctr", "--data_dir", data.toString());
        assertEquals(0, dry.await(JOB_TIMEOUT), dry.describe());
        String plan = Files.readString(work.resolve("dry/launcher.out"));
        assertTrue(plan.contains("parameter-server plan: mode async, 2 servers"), plan);
        assertTrue(plan.contains("communicator: async: gradients queue per variable (send_queue_size 5)"), plan);
        assertTrue(plan.contains("each sum up to 3 queued gradients of a variable into one send (max_merge_var_num)"), plan);
    }
}
