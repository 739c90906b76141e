package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ctr through the real bin/fleetrun with 2 servers x 4 workers in async, half-async and geo modes: each reaches a
 * test AUC within 0.01 of the single-process run on the same data and within 0.02 of the planted model's. The row
 * count is what this 2-core machine trains in the three modes in about four minutes ({@value #ROWS} generated rows;
 * {@code scripts/bench/ps_modes_auc.sh} runs the 1M, docs/PERFORMANCE.md has its result).
 */
class PsModesAucIT {
    static final int ROWS = 200_000;
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(4);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The single-process run's batch; each of the 4 workers takes a quarter of it. */
    private static final int BATCH = 512;
    private static final int WORKERS = 4;
    private static final List<String> CTR = List.of("--optimizer", "adagrad", "--lr", "0.05", "--eval_steps", "100000");

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
        List<String> all = new java.util.ArrayList<>(List.of("--data_dir", data.toString(), "--batch_size", "" + batch));
        all.addAll(CTR);
        return all.toArray(String[]::new);
    }

    private static JsonNode train(String mode, String strategy) throws Exception {
        Path yaml = Files.writeString(work.resolve(mode + ".yaml"), "mode: ps\na_sync: true\n" + strategy);
        FleetRunJob job = FleetRunJob.start(work.resolve(mode), WORKERS, List.of("--server_num", "2", "--worker_num",
                "" + WORKERS, "--strategy", yaml.toString()), "ctr", args(BATCH / WORKERS));
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
        train("async", "a_sync_configs:\n  runtime_split_send_recv: true\n  max_merge_var_num: 4\n  thread_pool_size: 2\n");
    }

    @Test
    void halfAsyncComesWithinAHundredthOfOneProcess() throws Exception {
        train("half-async", "a_sync_configs:\n  thread_pool_size: 2\n");
    }

    @Test
    void geoComesWithinAHundredthOfOneProcess() throws Exception {
        train("geo", "a_sync_configs:\n  k_steps: 8\n  thread_pool_size: 4\n");
    }
}
