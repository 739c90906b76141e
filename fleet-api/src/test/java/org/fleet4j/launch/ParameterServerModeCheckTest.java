package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parameter servers and a strategy file must agree: servers without a ps strategy, or a ps strategy without servers,
 * is refused by the launcher with one line and exit code 2 before any process starts.
 */
class ParameterServerModeCheckTest {
    private static final Duration JOB_TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path work;

    private void assertRefusedBeforeStart(List<String> args, String message) throws Exception {
        Path probe = Files.createDirectories(work.resolve("probe"));
        LauncherRun launcher = LauncherRun.javaMain(work, Map.of("PROBE_DIR", probe.toString()), args);
        assertEquals(2, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        String err = launcher.stderr().strip();
        assertEquals(1, err.lines().count(), err);
        assertTrue(err.startsWith("fleetrun: " + message), err);
        assertFalse(Files.exists(work.resolve("log/workerlog.0")), "no process started: " + err);
    }

    @Test
    void aPsStrategyWithoutServersIsRefused() throws Exception {
        Path strategy = Files.writeString(work.resolve("ps.yaml"), "mode: ps\n");
        assertRefusedBeforeStart(List.of("--strategy", strategy.toString(), RoleProbe.class.getName()),
                "--strategy " + strategy + " has mode ps, but the job has no parameter servers; start them with"
                        + " --server_num S (or --servers/--workers), or set mode: collective");
    }

    @Test
    void serversWithACollectiveStrategyAreRefused() throws Exception {
        Path strategy = Files.writeString(work.resolve("collective.yaml"), "mode: collective\n");
        assertRefusedBeforeStart(List.of("--server_num", "1", "--strategy", strategy.toString(), RoleProbe.class.getName()),
                "--server_num 1 starts parameter servers, but --strategy " + strategy + " has mode collective; set mode: ps in it");
    }
}
