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
 * An {@code .endpoint_map} in the launcher's working directory (which its processes share) is checked before anything
 * starts: a data port of 0, or one that another process of the job listens on, is one line naming the line of the
 * map, and exit code 2.
 */
class EndpointMapCheckTest {
    private static final Duration JOB_TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path work;

    /** A job of one trainer on port P and one server on P + 1, with {@code map} as the working directory's map. */
    private LauncherRun launch(int port, String map) throws Exception {
        Files.writeString(work.resolve(".endpoint_map"), map);
        Path probe = Files.createDirectories(work.resolve("probe"));
        return LauncherRun.javaMain(work, Map.of("PROBE_DIR", probe.toString()), List.of("--server_num", "1",
                "--start_port", Integer.toString(port), "--jvm_args", "-XX:TieredStopAtLevel=1 -Xmx64m",
                RoleProbe.class.getName()));
    }

    private void assertRefused(LauncherRun launcher, String message) throws Exception {
        assertEquals(2, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        String err = launcher.stderr().strip();
        assertEquals("fleetrun: " + message, err);
        assertFalse(Files.exists(work.resolve("log/serverlog.0")), "no process started");
    }

    @Test
    void aDataPortOfZeroIsRefusedUpFront() throws Exception {
        int port = FreePorts.consecutive(2);
        String server = "127.0.0.1:" + (port + 1);
        assertRefused(launch(port, "# grpc++ data ports\n" + server + "=127.0.0.1:0\n"), work.resolve(".endpoint_map")
                + " line 2: '" + server + "=127.0.0.1:0' maps the server to data port 0 (any free port), which its"
                + " workers cannot know; give it a fixed free port");
    }

    @Test
    void aDataPortOnATrainersPortIsRefusedUpFront() throws Exception {
        int port = FreePorts.consecutive(2);
        String server = "127.0.0.1:" + (port + 1);
        String trainer = "127.0.0.1:" + port;
        LauncherRun launcher = launch(port, server + "=" + trainer + "\n");
        assertRefused(launcher, work.resolve(".endpoint_map") + " line 1: data endpoint " + trainer + " of server " + server
                + " is rank 0's endpoint (and the rendezvous store's); give the server a data port that no other port"
                + " of the job uses");
        assertTrue(launcher.stdout().isEmpty(), launcher.stdout());
    }
}
