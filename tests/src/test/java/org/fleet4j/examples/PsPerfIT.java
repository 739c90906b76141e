package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
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
 * {@code ps_perf} through the real {@code bin/fleetrun} with 2 servers and 2 workers over grpc: a short run writes
 * summary.json with the fields, sane (keys moved, p50 <= p99, a pull's wire bytes within 1.1x its payload of
 * ids and rows), and the servers end with the job. Bad flags exit 2 naming the flag. Not timed.
 */
class PsPerfIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);
    private static final List<String> SERVERS = List.of("--server_num", "2", "--worker_num", "2");

    @TempDir
    Path work;

    @Test
    void aShortRunWritesASaneSummary() throws Exception {
        FleetRunJob job = FleetRunJob.start(work.resolve("run"), 2, SERVERS, "ps_perf", "--ids", "50000", "--dim", "8",
                "--batch", "1024", "--steps", "40", "--warmup", "10", "--batches", "8", "--dense", "3");
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        JsonNode s = new ObjectMapper().readTree(job.logDir().resolve("summary.json").toFile());
        assertEquals("grpc", s.get("protocol").asText());
        assertFalse(s.get("tensor_fuse").asBoolean(), s.toString());
        assertEquals(2 * (2 + 3), s.get("calls_per_step").asInt(), "a pull and a push per server of the rows and"
                + " per dense tensor: " + s);
        assertEquals(2, s.get("servers").asInt());
        assertEquals(2, s.get("workers").asInt());
        assertEquals(50000, s.get("ids").asLong());
        assertEquals(8, s.get("dim").asInt());
        assertEquals(1024, s.get("batch").asInt());
        double unique = s.get("unique_per_step").asDouble();
        assertTrue(unique > 1 && unique < 1024, "Zipf ids repeat, so fewer unique than drawn: " + s);
        assertTrue(s.get("keys_per_sec").asDouble() > 0, s.toString());
        assertTrue(s.get("mb_per_sec").asDouble() > 0, s.toString());
        assertTrue(s.get("p50_ms").asDouble() > 0 && s.get("p50_ms").asDouble() <= s.get("p99_ms").asDouble(),
                s.toString());
        double payload = unique * (8 + 4 * 8);
        assertEquals(payload, s.get("pull_payload_bytes").asDouble(), 1e-6 * payload, s.toString());
        double pull = s.get("wire_bytes_per_pull").asDouble();
        assertTrue(pull >= payload && pull <= 1.1 * payload, "a pull's wire bytes " + pull + " against its payload "
                + payload + ": " + s);
        double denseBytes = s.get("dense_bytes").asDouble();
        assertTrue(denseBytes >= 3 * 4096 && denseBytes <= 3 * 256 * 1024, s.toString());
        assertTrue(s.get("wire_bytes_per_step").asDouble() >= 2 * payload + 2 * denseBytes, "a step pulls and pushes"
                + " the rows and the dense tensors: " + s);
        for (int server = 0; server < 2; server++) {
            String log = Files.readString(job.logDir().resolve("serverlog." + server));
            assertTrue(log.contains("ps_perf: server " + server + " stopped by the workers"), log);
        }
    }

    /**
     * star_server fuses a step: one pull and one push per server, carrying the rows and the dense tensors, so the
     * fused pull's wire bytes cover both payloads within the same 1.1x.
     */
    @Test
    void aStarServerRunFusesEachStepToOneMessagePerServer() throws Exception {
        FleetRunJob job = FleetRunJob.start(work.resolve("star"), 2, SERVERS, "ps_perf", "--protocol", "star_server",
                "--ids", "50000", "--dim", "8", "--batch", "1024", "--steps", "40", "--warmup", "10", "--batches", "8",
                "--dense", "3");
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        JsonNode s = new ObjectMapper().readTree(job.logDir().resolve("summary.json").toFile());
        assertEquals("star_server", s.get("protocol").asText());
        assertTrue(s.get("tensor_fuse").asBoolean(), s.toString());
        assertEquals(2 * 2, s.get("calls_per_step").asInt(), "one pull and one push per server: " + s);
        assertTrue(s.get("keys_per_sec").asDouble() > 0, s.toString());
        double payload = s.get("unique_per_step").asDouble() * (8 + 4 * 8) + s.get("dense_bytes").asDouble();
        assertEquals(payload, s.get("pull_payload_bytes").asDouble(), 1e-6 * payload, s.toString());
        double pull = s.get("wire_bytes_per_pull").asDouble();
        assertTrue(pull >= payload && pull <= 1.1 * payload, "a fused pull's wire bytes " + pull + " against its"
                + " payload of rows and dense tensors " + payload + ": " + s);
        assertTrue(s.get("wire_bytes_per_step").asDouble() >= 2 * payload, "the push carries as much again: " + s);
        // --protocol reaches the strategy Fleet.init prints, so the logs name the transport that ran, not the default
        String worker = Files.readString(job.logDir().resolve("workerlog.0"));
        assertTrue(worker.contains("  protocol = star_server (code)") && worker.contains("fleet: transport: star_server "),
                worker);
        assertFalse(worker.contains("a_sync = false"), "ps_perf's plan is async, so is its strategy: " + worker);
    }

    @Test
    void badFlagsExitTwoNamingTheFlag() throws Exception {
        FleetRunJob dim = FleetRunJob.start(work.resolve("dim"), 1, List.of("--server_num", "1", "--worker_num", "1"),
                "ps_perf", "--dim", "0");
        // worker and server both refuse the flag; whichever does first, the launcher stops the other, so the refusal
        // is looked for in every log and the launcher names the exit code
        assertNotEquals(0, dim.await(JOB_TIMEOUT));
        assertTrue(dim.describe().contains("ps_perf: --dim must be at least 1, got 0"), dim.describe());
        assertTrue(dim.stderr().contains("exited with code 2"), dim.stderr());

        FleetRunJob fuse = FleetRunJob.start(work.resolve("fuse"), 1, List.of("--server_num", "1", "--worker_num", "1"),
                "ps_perf", "--tensor_fuse", "maybe");
        assertNotEquals(0, fuse.await(JOB_TIMEOUT));
        assertTrue(fuse.describe().contains("ps_perf: --tensor_fuse must be true or false, got 'maybe'"),
                fuse.describe());
        assertTrue(fuse.stderr().contains("exited with code 2"), fuse.stderr());

        FleetRunJob protocol = FleetRunJob.start(work.resolve("protocol"), 1, List.of("--server_num", "1",
                "--worker_num", "1"), "ps_perf", "--protocol", "carrier_pigeon");
        assertNotEquals(0, protocol.await(JOB_TIMEOUT));
        assertTrue(protocol.stderr().contains("exited with code 2"), protocol.stderr());
        assertTrue(protocol.describe().contains("ps_perf: --protocol carrier_pigeon: no parameter-server transport for"
                + " protocol 'carrier_pigeon'; registered: ["), protocol.describe());
    }
}
