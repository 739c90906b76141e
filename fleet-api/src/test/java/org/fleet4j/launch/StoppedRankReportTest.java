package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rank stopped by a signal (SIGSTOP, Ctrl-Z, a debugger) makes no progress and its peers learn of it only at their
 * timeout; the launcher sees the stopped state itself and says so within seconds, without ending the job, and says
 * when the rank runs again.
 */
class StoppedRankReportTest {
    private static final Duration JOB_TIMEOUT = Duration.ofSeconds(60);
    /** The launcher reports a rank stopped for a few seconds; this is far more, and far less than FLEET_TIMEOUT. */
    private static final Duration REPORT_WITHIN = Duration.ofSeconds(20);

    @TempDir
    Path work;

    @Test
    void aStoppedRankIsReportedAtOnceAndTheJobGoesOn() throws Exception {
        Path probe = Files.createDirectories(work.resolve("probe"));
        LauncherRun launcher = LauncherRun.javaMain(work, Map.of("PROBE_DIR", probe.toString(), "PROBE_WAIT", "1",
                "FLEET_TIMEOUT", "170"), List.of("--jvm_args", "-XX:TieredStopAtLevel=1 -Xmx64m", RoleProbe.class.getName()));
        try {
            long pid = Long.parseLong(Await.file(probe.resolve("rank-0.pid"), launcher).strip());
            signal("STOP", pid);
            awaitStderr(launcher, "fleetrun: rank 0 (pid " + pid + ") is stopped by a signal; waiting up to 170 s"
                    + " (FLEET_TIMEOUT) for it to run again\n");
            signal("CONT", pid);
            awaitStderr(launcher, "fleetrun: rank 0 (pid " + pid + ") runs again\n");
            RoleProbe.writeAtomically(probe.resolve("release"), "go");
            assertEquals(0, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        } finally {
            launcher.process().descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.process().destroyForcibly();
        }
    }

    private static void signal(String name, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -" + name + " " + pid);
    }

    private static void awaitStderr(LauncherRun launcher, String text) throws InterruptedException {
        long deadline = System.nanoTime() + REPORT_WITHIN.toNanos();
        while (!launcher.stderr().contains(text)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the launcher did not say '" + text.strip() + "' within " + REPORT_WITHIN
                        + "; its stderr:\n" + launcher.stderr());
            }
            Thread.sleep(50);
        }
    }
}
