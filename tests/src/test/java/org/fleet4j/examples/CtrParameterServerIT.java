package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The unchanged ctr program under {@code bin/fleetrun --server_num 2 --worker_num 2} with a strategy of mode ps (sync):
 * it trains against the servers, fills summary.json's mode, protocol, servers and workers, and the servers, stopped
 * by the workers, end with the job. {@code --dry_run} prints the parameter-server plan instead. The same over
 * {@code protocol: grpc++} with 1 server x 2 workers.
 */
class CtrParameterServerIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(4);

    @TempDir
    Path work;

    private Path data;
    private Path strategy;
    private FleetRunJob job;

    /** ctr_data's 8,000 rows, then ctr with 2 workers and {@code servers} servers under {@code yaml}: its summary. */
    private JsonNode trainCtr(String yaml, int servers) throws Exception {
        data = work.resolve("data");
        FleetRunJob gen = FleetRunJob.start(work.resolve("gen"), 1, "ctr_data", "--rows", "8000", "--out", data.toString());
        assertEquals(0, gen.await(Duration.ofSeconds(120)), gen.describe());
        strategy = Files.writeString(work.resolve("ps.yaml"), yaml);
        List<String> ps = List.of("--server_num", "" + servers, "--worker_num", "2", "--strategy", strategy.toString());
        job = FleetRunJob.start(work.resolve("run"), 2, ps, "ctr", "--data_dir", data.toString(),
                "--batch_size", "128", "--optimizer", "adagrad", "--lr", "0.05");
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        JsonNode summary = new ObjectMapper().readTree(job.logDir().resolve("summary.json").toFile());
        assertEquals(servers, summary.get("servers").asInt());
        assertEquals(2, summary.get("workers").asInt());
        assertTrue(summary.get("auc").asDouble() > 0.6, "it learns: " + summary);
        return summary;
    }

    @Test
    void ctrTrainsInSyncModeAgainstTwoServersAndSaysSoInTheSummary() throws Exception {
        JsonNode summary = trainCtr("mode: ps\na_sync: false\n", 2);
        assertEquals("ps-sync", summary.get("mode").asText());
        assertEquals("grpc", summary.get("protocol").asText());
        for (int s = 0; s < 2; s++) {
            String log = Files.readString(job.logDir().resolve("serverlog." + s));
            assertTrue(log.contains("fleet: server " + s + " serves 6 dense and 52 sparse table(s)"), log);
            assertTrue(log.contains("fleet: server " + s + " stopped by the workers"), log);
        }
        assertTrue(job.stderr().contains("fleetrun: job default: all 2 rank(s) finished"), job.stderr());

        FleetRunJob dry = FleetRunJob.start(work.resolve("dry"), 2, List.of("--dry_run", "--server_num", "2", "--worker_num",
                "2", "--strategy", strategy.toString()), "ctr", "--data_dir", data.toString());
        assertEquals(0, dry.await(JOB_TIMEOUT), dry.describe());
        String plan = Files.readString(work.resolve("dry/launcher.out"));
        assertTrue(plan.contains("parameter-server plan: mode sync, 2 servers"), plan);
        assertTrue(plan.contains("communicator: sync: each push returns once its servers took it"), plan);
        assertTrue(plan.contains("server 1:"), plan);
    }

    @Test
    void ctrTrainsOverGrpcppWithOneServerAndTwoWorkers() throws Exception {
        JsonNode summary = trainCtr("mode: ps\na_sync: false\nprotocol: grpc++\n", 1);
        assertEquals("grpc++", summary.get("protocol").asText());
        String log = Files.readString(job.logDir().resolve("serverlog.0"));
        assertTrue(log.contains("(grpc++): data port 127.0.0.1:"), log);
        assertTrue(log.contains("(from FLEET_PS_ENDPOINT_MAP), 2 network threads"), "min(8, 2 workers): " + log);
        assertTrue(log.contains("fleet: server 0 stopped by the workers"), log);

        FleetRunJob dry = FleetRunJob.start(work.resolve("dry"), 2, List.of("--dry_run", "--server_num", "1",
                "--worker_num", "2", "--strategy", strategy.toString()), "ctr", "--data_dir", data.toString());
        assertEquals(0, dry.await(JOB_TIMEOUT), dry.describe());
        String plan = Files.readString(work.resolve("dry/launcher.out"));
        assertTrue(plan.contains("transport: grpc++ on "), plan);
        assertTrue(plan.contains("servers: 2 network threads, sleeping in epoll, pinned to cores"), plan);
        assertTrue(plan.contains("pulls and pushes on their data ports (FLEET_PS_ENDPOINT_MAP)"), "published: " + plan);
    }
}
