package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.fleet.role.UserDefinedRoleMaker;
import org.fleet4j.strategy.DistributedStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The two ranks of a data-parallel job inside one JVM, each on its own thread with its own Fleet: their collective
 * kernels find their rings through their own execution context, so the ranks do not meet in any process-wide registry
 * (with one, the second rank's ring 0 collided with the first's), and they train exactly as the same job does in two
 * processes started by the real launcher.
 */
class TwoRanksInOneJvmTest {
    private static final Duration JOB_TIMEOUT = Duration.ofSeconds(120);
    private static final int GLOBAL_BATCH = 16;
    private static final int STEPS = 10;

    @TempDir
    Path work;

    @Test
    void twoRanksOnTwoThreadsTrainBitForBitAsTwoProcesses() throws Exception {
        Properties[] threads = inOneJvm();
        Properties[] processes = FleetProbe.launch(work, "processes", 2, Map.of(), GLOBAL_BATCH, STEPS);
        for (int r = 0; r < 2; r++) {
            assertTrue(threads[r].getProperty("main_ops").contains("c_allreduce"), threads[r].getProperty("main_ops"));
            assertEquals("[100, 101]", threads[r].getProperty("gather"), "rank " + r);
            for (String key : List.of("initial", "losses", "trained", "main_ops")) {
                assertEquals(processes[r].getProperty(key), threads[r].getProperty(key),
                        "rank " + r + "'s " + key + " on a thread against its process");
            }
        }
        assertEquals(threads[0].getProperty("trained"), threads[1].getProperty("trained"));
        assertNotEquals(threads[0].getProperty("initial"), threads[0].getProperty("trained"));
    }

    /** Both ranks on threads of this JVM, with one job token and a store at a free port; every wait is bounded. */
    private static Properties[] inOneJvm() throws Exception {
        String master = "127.0.0.1:" + FreePorts.one();
        Map<String, String> env = Map.of(JobToken.ENV, JobToken.random().text());
        GroupOptions options = GroupOptions.defaults().withTimeout(Duration.ofSeconds(30));
        ExecutorService ranks = Executors.newFixedThreadPool(2);
        try {
            List<Future<Properties>> results = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                results.add(ranks.submit(() -> {
                    PrintStream log = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
                    try (Fleet fleet = Fleet.init(UserDefinedRoleMaker.oneHost(rank, 2, master, "threads"),
                            new DistributedStrategy(), options, log, false, env)) {
                        assertEquals(fleet.processGroup(), fleet.execContext().ring(Fleet.DEFAULT_RING), "rank " + rank + "'s ring 0 is its own group");
                        return FleetProbe.run(fleet, GLOBAL_BATCH, STEPS, false);
                    }
                }));
            }
            Properties[] out = new Properties[2];
            for (int r = 0; r < 2; r++) {
                out[r] = results.get(r).get(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            }
            return out;
        } finally {
            ranks.shutdownNow();
        }
    }

}
