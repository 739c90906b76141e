package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exit codes of docs/LAUNCHER.md, one real job through bin/fleetrun per row: 0 success, 1 a bug, 2 bad input or
 * configuration, 3 a peer that died or stalled, 130 and 143 for SIGINT and SIGTERM of the launcher.
 */
class ExitCodeTableIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(2);
    /** Short, so that a stalled rank's peer gives up in seconds; the stall warning comes at a third of it. */
    private static final String STALL_TIMEOUT_SECONDS = "6";
    private static final Path FLEETRUN = Path.of("").toAbsolutePath().getParent().resolve("bin/fleetrun");
    private static final List<String> FOREVER = List.of("--steps", "1000000", "--warmup", "0");

    @TempDir
    Path work;

    @Test
    void success() throws Exception {
        FleetRunJob job = FleetRunJob.start(work.resolve("ok"), 1, "mlp_perf", "--steps", "1", "--warmup", "0");
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
    }

    @Test
    void anInternalErrorIsOne() throws Exception {
        Path jar = ProgramJar.of(InternalErrorProgram.class, work.resolve("jar/internal-error.jar"));
        FleetRunJob job = FleetRunJob.start(work.resolve("bug"), 1, jar.toString());
        assertEquals(1, job.await(JOB_TIMEOUT), job.describe());
        assertTrue(job.stderr().contains("rank 0 (pid "), job.describe());
    }

    @Test
    void badInputIsTwo() throws Exception {
        FleetRunJob flag = FleetRunJob.start(work.resolve("flag"), 1, "mlp_perf", "--steps", "0");
        assertEquals(2, flag.await(JOB_TIMEOUT), flag.describe());

        Process logDir = new ProcessBuilder(FLEETRUN.toString(), "--log_dir", "/proc/fleet4j-logs", "mlp_perf")
                .directory(work.toFile()).redirectOutput(work.resolve("log-dir.out").toFile())
                .redirectError(work.resolve("log-dir.err").toFile()).start();
        assertTrue(logDir.waitFor(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS), "fleetrun --log_dir /proc/... still runs");
        String err = Files.readString(work.resolve("log-dir.err")).strip();
        assertEquals(2, logDir.exitValue(), err);
        assertEquals("fleetrun: --log_dir /proc/fleet4j-logs: cannot create it: No such file or directory", err);
        assertFalse(err.contains("java.nio"), err);
    }

    @Test
    void aStalledPeerIsThreeAndIsNamedBeforeTheTimeout() throws Exception {
        FleetRunJob job = FleetRunJob.startWithEnvironment(work.resolve("stall"), 2, Map.of("FLEET_TIMEOUT",
                STALL_TIMEOUT_SECONDS), List.of(), "mlp_perf", FOREVER.toArray(String[]::new));
        awaitLog(job, "workerlog.0", "compiler pipeline");
        ProcessHandle rank1 = job.rankProcess(1);
        signal("STOP", rank1.pid());

        assertEquals(3, job.await(JOB_TIMEOUT), job.describe());
        String err = job.stderr();
        assertTrue(err.contains("fleetrun: rank 1 (pid " + rank1.pid() + ") is stopped by a signal; waiting up to "
                + STALL_TIMEOUT_SECONDS + " s (FLEET_TIMEOUT) for it to run again"), job.describe());
        assertTrue(err.contains("fleetrun: rank 0 (pid "), job.describe());
        assertTrue(err.contains(") exited with code 3 (a peer died or stalled)"), job.describe());
        String log = Files.readString(job.logDir().resolve("workerlog.0"));
        assertTrue(log.matches("(?s).*rank 0 of group '[^']+' \\(2 ranks\\): [a-z_]+ #\\d+ \\(.*\\) has waited 2 s for"
                + " ranks \\[1\\].*"), "rank 0 warned of the stall, naming the op and the peer:\n" + log);
        assertFalse(rank1.isAlive(), "the stopped rank is stopped with the job");
    }

    @Test
    void aPeerKilledByASignalIsThree() throws Exception {
        FleetRunJob job = FleetRunJob.start(work.resolve("killed"), 2, "mlp_perf", FOREVER.toArray(String[]::new));
        awaitLog(job, "workerlog.0", "compiler pipeline");
        job.rankProcess(1).destroyForcibly();
        assertEquals(3, job.await(JOB_TIMEOUT), job.describe());
    }

    @Test
    void sigintOfTheLauncherIs130() throws Exception {
        FleetRunJob job = FleetRunJob.start(work.resolve("sigint"), 1, "mlp_perf", FOREVER.toArray(String[]::new));
        awaitLog(job, "workerlog.0", "compiler pipeline");
        signal("INT", job.launcher().pid());
        assertEquals(130, job.await(JOB_TIMEOUT), job.describe());
    }

    @Test
    void sigtermOfTheLauncherIs143() throws Exception {
        FleetRunJob job = FleetRunJob.start(work.resolve("sigterm"), 1, "mlp_perf", FOREVER.toArray(String[]::new));
        awaitLog(job, "workerlog.0", "compiler pipeline");
        signal("TERM", job.launcher().pid());
        assertEquals(143, job.await(JOB_TIMEOUT), job.describe());
    }

    private static void signal(String name, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -" + name + " " + pid);
    }

    /** Polls a rank's log until it holds {@code text}; fails naming the log when the job ends or a minute passes. */
    private static void awaitLog(FleetRunJob job, String log, String text) throws Exception {
        Path file = job.logDir().resolve(log);
        long until = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (!(Files.exists(file) && Files.readString(file).contains(text))) {
            if (!job.launcher().isAlive() || System.nanoTime() > until) {
                job.launcher().descendants().forEach(ProcessHandle::destroyForcibly);
                job.launcher().destroyForcibly();
                throw new AssertionError(log + " did not show '" + text + "':\n" + job.describe());
            }
            Thread.sleep(50);
        }
    }
}
