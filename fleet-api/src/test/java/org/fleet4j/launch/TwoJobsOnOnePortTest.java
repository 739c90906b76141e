package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.JobToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two single-host jobs, both named "default", started together on one --start_port: the one whose rank 0 gets the
 * port runs on; the other fails at once, saying that another job holds the port, and none of its ranks joins the
 * winner's job (each launcher made its own token, which the store and the data ports check).
 */
class TwoJobsOnOnePortTest {
    private static final String LIGHT_JVM = "-XX:TieredStopAtLevel=1 -Xshare:auto -XX:+UseSerialGC -Xmx128m";
    /** Far above what a failing rank needs, far below the ranks' rendezvous timeout: the loser must not wait that out. */
    private static final Duration LOSER_EXIT = Duration.ofSeconds(60);
    private static final String RANK_TIMEOUT_SECONDS = "300";

    @TempDir
    Path work;

    @Test
    void theJobThatLosesThePortFailsAtOnceAndTheWinnerRunsOn() throws Exception {
        int port = FreePorts.consecutive(2);
        LauncherRun[] jobs = new LauncherRun[2];
        Path[] probes = new Path[2];
        for (int j = 0; j < 2; j++) {
            probes[j] = Files.createDirectories(work.resolve("probe" + j));
            Map<String, String> env = new HashMap<>();
            env.put("PROBE_DIR", probes[j].toString());
            env.put("FLEET_TIMEOUT", RANK_TIMEOUT_SECONDS);
            env.put(JobToken.ENV, null);
            env.put(JobToken.FILE_ENV, null);
            jobs[j] = LauncherRun.javaMain(work, env, List.of("--jvm_args", LIGHT_JVM, "--nproc_per_node", "2",
                    "--start_port", Integer.toString(port), "--log_dir", "log" + j, RendezvousProbe.class.getName()));
        }
        try {
            CompletableFuture.anyOf(jobs[0].process().onExit(), jobs[1].process().onExit())
                    .get(LOSER_EXIT.toMillis(), TimeUnit.MILLISECONDS);
            int loser = jobs[0].process().isAlive() ? 1 : 0;
            int winner = 1 - loser;
            String lost = jobs[loser].stdout() + jobs[loser].stderr();
            assertNotEquals(0, jobs[loser].awaitExit(Duration.ofSeconds(10)), lost);
            assertTrue(lost.contains("port " + port) && lost.contains("another job"), lost);
            assertTrue(jobs[winner].process().isAlive(), "the winner must run on: " + jobs[winner].stderr());
            for (int rank = 0; rank < 2; rank++) {
                assertFalse(Files.exists(probes[loser].resolve("rank-" + rank + ".joined")),
                        "rank " + rank + " of the losing job joined a job:\n" + lost);
                Await.file(probes[winner].resolve("rank-" + rank + ".joined"), jobs[winner]);
            }
            Files.writeString(probes[winner].resolve("release"), "go");
            assertEquals(0, jobs[winner].awaitExit(Duration.ofSeconds(60)), jobs[winner].stderr());
            assertTrue(jobs[winner].stdout().contains("rank 0 counted 2 ranks in its job"), jobs[winner].stdout());
        } finally {
            for (LauncherRun job : jobs) {
                job.process().descendants().forEach(ProcessHandle::destroyForcibly);
                job.process().destroyForcibly();
            }
        }
    }
}
