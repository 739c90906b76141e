package org.fleet4j.collective;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Real rank processes started through the FLEET_* environment: correctness, kill -9 and a stalled rank. */
class ProcessFaultTest {
    @TempDir
    Path logs;

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void ranksStartedFromTheEnvironmentComputeCorrectly(Backend backend) throws Exception {
        try (RankProcesses ranks = new RankProcesses(3, RankMain.class, List.of("ops"),
                Map.of("FLEET_TEST_BACKEND", backend.name(), "FLEET_TEST_DTYPES", "f32,i32,bf16"), logs)) {
            for (int r = 0; r < 3; r++) {
                assertEquals(0, ranks.exitCode(r, Duration.ofSeconds(120)), "rank " + r + " log:\n" + ranks.log(r));
                assertTrue(ranks.log(r).contains("BACKEND " + backend.name().toLowerCase()), ranks.log(r));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void killingARankFailsTheSurvivorsNamingIt(Backend backend) throws Exception {
        // the group timeout is long: the survivors must notice the death itself, not time out
        try (RankProcesses ranks = new RankProcesses(3, RankMain.class, List.of("loop"),
                Map.of("FLEET_TEST_BACKEND", backend.name(), "FLEET_TEST_TIMEOUT_MS", "60000"), logs)) {
            for (int r = 0; r < 3; r++) {
                ranks.awaitLog(r, "ITER 3", Duration.ofSeconds(60));
            }
            ranks.kill(2);
            for (int r = 0; r < 2; r++) {
                assertEquals(3, ranks.exitCode(r, Duration.ofSeconds(30)), "rank " + r + " log:\n" + ranks.log(r));
                String log = ranks.log(r);
                assertTrue(log.contains("FAILED: allreduce #"), log);
                assertTrue(log.contains("rank 2"), log);
                assertTrue(log.contains("did not take part") || log.contains("did not finish"), log);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void aStalledRankTimesOutTheOthersNamingIt(Backend backend) throws Exception {
        try (RankProcesses ranks = new RankProcesses(2, RankMain.class, List.of("loop"),
                Map.of("FLEET_TEST_BACKEND", backend.name(), "FLEET_TEST_TIMEOUT_MS", "4000", "FLEET_TEST_STALL", "1"), logs)) {
            ranks.awaitLog(1, "STALLING", Duration.ofSeconds(60));
            assertEquals(3, ranks.exitCode(0, Duration.ofSeconds(30)), ranks.log(0));
            String log = ranks.log(0);
            assertTrue(log.contains("timed out after 4000 ms"), log);
            assertTrue(log.contains("ranks [1] did not take part"), log);
            assertTrue(ranks.process(1).isAlive(), "the stalled rank is only slow, not dead");
        }
    }
}
