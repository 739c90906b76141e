package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real launchers on one --log_dir: the second is refused before it starts anything, naming the job that holds
 * the folder, and the first job's logs stay its own; once the first has ended, or when the lock file names a launcher
 * that is dead, the folder is free.
 */
class SharedLogDirTest {
    private static final String LIGHT_JVM = "-XX:TieredStopAtLevel=1 -Xshare:auto -XX:+UseSerialGC -Xmx64m";
    private static final Duration JOB_TIMEOUT = Duration.ofSeconds(60);
    /** The lock file, as docs/LAUNCHER.md names it. */
    private static final String LOCK_FILE = ".fleetrun.lock";

    @TempDir
    Path work;

    private LauncherRun launch(Path probeDir, boolean wait, String... args) throws IOException {
        Map<String, String> env = new HashMap<>();
        env.put("PROBE_DIR", probeDir.toString());
        if (wait) {
            env.put("PROBE_WAIT", "1");
        }
        List<String> all = new ArrayList<>(List.of("--jvm_args", LIGHT_JVM));
        all.addAll(List.of(args));
        all.add(RoleProbe.class.getName());
        return LauncherRun.javaMain(work, env, all);
    }

    @Test
    void aSecondJobOnTheSameLogDirIsRefusedNamingTheHolder() throws Exception {
        Path firstProbe = Files.createDirectories(work.resolve("probe-first"));
        Path secondProbe = Files.createDirectories(work.resolve("probe-second"));
        LauncherRun first = launch(firstProbe, true, "--job_id", "first");
        try {
            Await.file(firstProbe.resolve("rank-0.pid"), first);
            LauncherRun second = launch(secondProbe, false, "--job_id", "second");

            assertEquals(2, second.awaitExit(JOB_TIMEOUT), second.stderr());
            String err = second.stderr().strip();
            assertEquals(1, err.lines().count(), err);
            assertTrue(err.startsWith("fleetrun: --log_dir " + work.resolve("log") + " is in use by job first (launcher pid "
                    + first.process().pid() + ", since "), err);
            assertTrue(err.contains("pass another --log_dir"), err);
            assertFalse(Files.exists(secondProbe.resolve("rank-0.pid")), "no rank of the refused job started");

            RoleProbe.writeAtomically(firstProbe.resolve("release"), "go");
            assertEquals(0, first.awaitExit(JOB_TIMEOUT), first.stderr());
            String log = Files.readString(work.resolve("log/workerlog.0"));
            assertTrue(log.contains("hello from rank 0 of 1"), log);
            assertTrue(Files.readString(work.resolve("log/endpoints.log")).contains("job first"),
                    "endpoints.log is the first job's");

            LauncherRun third = launch(secondProbe, false, "--job_id", "third");
            assertEquals(0, third.awaitExit(JOB_TIMEOUT), "the folder is free once its job ended: " + third.stderr());
        } finally {
            first.process().descendants().forEach(ProcessHandle::destroyForcibly);
            first.process().destroyForcibly();
        }
    }

    @Test
    void aLockFileLeftByADeadLauncherIsTakenOver() throws Exception {
        Process dead = new ProcessBuilder("true").start();
        dead.waitFor();
        Path log = Files.createDirectories(work.resolve("log"));
        Files.writeString(log.resolve(LOCK_FILE), "job old\npid " + dead.pid() + "\nsince 2026-01-01T00:00:00Z\n");
        Path probe = Files.createDirectories(work.resolve("probe"));

        LauncherRun launcher = launch(probe, false, "--job_id", "new");

        assertEquals(0, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        assertTrue(Files.readString(log.resolve(LOCK_FILE)).startsWith("job new\npid " + launcher.process().pid() + "\n"),
                Files.readString(log.resolve(LOCK_FILE)));
    }
}
