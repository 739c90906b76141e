package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Fleet in real rank processes started by the real launcher: util, barrier, broadcast and gradient allreduce. */
class DataParallelFleetTest {
    private static final Duration JOB_TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path work;

    private Properties[] launch(String name, int nproc, int globalBatch, int steps) throws Exception {
        return launch(name, nproc, Map.of(), globalBatch, steps);
    }

    private Properties[] launch(String name, int nproc, Map<String, String> env, int globalBatch, int steps) throws Exception {
        Path out = Files.createDirectories(work.resolve(name + "-out"));
        LaunchedJob job = LaunchedJob.run(work.resolve(name), nproc, env, JOB_TIMEOUT, FleetProbe.class.getName(),
                out.toString(), "" + globalBatch, "" + steps);
        assertEquals(0, job.exitCode(), job.describe());
        Properties[] ranks = new Properties[nproc];
        for (int r = 0; r < nproc; r++) {
            ranks[r] = new Properties();
            ranks[r].load(new StringReader(Files.readString(out.resolve("rank-" + r + ".properties"))));
        }
        assertTrue(job.stdout().contains("[rank 0] fleet: rank 0 of " + nproc), job.describe());
        assertTrue(job.stdout().contains("[rank 0] fleet: effective strategy for 1 node x " + nproc), job.describe());
        return ranks;
    }

    @Test
    void twoAndFourRanksAgreeWithOneRankOnTheWholeBatch() throws Exception {
        Properties one = launch("one", 1, 16, 10)[0];
        assertTrue(!one.getProperty("main_ops").contains("c_allreduce"), "a world of one inserts no allreduce: "
                + one.getProperty("main_ops"));
        Properties[] two = launch("two", 2, 16, 10);
        for (int r = 0; r < 2; r++) {
            Properties p = two[r];
            assertEquals("2", p.getProperty("worker_num"));
            assertEquals("1", p.getProperty("node_num"));
            assertEquals("" + r, p.getProperty("local_rank"));
            assertEquals("" + (r == 0), p.getProperty("first"));
            assertEquals("4.0", p.getProperty("sum"));
            assertEquals("1.5", p.getProperty("min"));
            assertEquals("20", p.getProperty("max"));
            assertEquals("[100, 101]", p.getProperty("gather"));
            assertTrue(p.getProperty("main_ops").contains("c_allreduce"), p.getProperty("main_ops"));
        }
        // rank 1 initialised with its own seed; the startup broadcast replaced that with rank 0's values
        assertEquals(two[0].getProperty("initial"), two[1].getProperty("initial"));
        assertEquals(one.getProperty("initial"), two[0].getProperty("initial"));
        assertEquals(two[0].getProperty("trained"), two[1].getProperty("trained"));
        assertNotEquals(two[0].getProperty("initial"), two[0].getProperty("trained"));
        assertSameTraining(one, two[0], "2 ranks");

        Properties[] four = launch("four", 4, 16, 10);
        assertEquals("[100, 101, 102, 103]", four[3].getProperty("gather"));
        for (int r = 1; r < 4; r++) {
            assertEquals(four[0].getProperty("trained"), four[r].getProperty("trained"), "rank " + r);
        }
        assertSameTraining(one, four[0], "4 ranks");
    }

    /** Sparse gradients (an is_sparse embedding) are gathered from every rank, not fused: 2 ranks equal 1 on the whole batch. */
    @Test
    void sparseGradientsTrainLikeOneRank() throws Exception {
        Map<String, String> sparse = Map.of("PROBE_SPARSE", "1");
        Properties one = launch("sparse-one", 1, sparse, 16, 10)[0];
        Properties[] two = launch("sparse-two", 2, sparse, 16, 10);
        assertTrue(one.getProperty("main_ops").contains("lookup_table"), one.getProperty("main_ops"));
        assertEquals(two[0].getProperty("trained"), two[1].getProperty("trained"));
        assertTrue(two[0].getProperty("trained").contains("embedding"), two[0].getProperty("trained"));
        assertSameTraining(one, two[0], "2 ranks with sparse gradients");
    }

    /** 20 samples over 3 ranks: shares of 7, 7 and 6, yet every rank runs the same steps and ends identical. */
    @Test
    void unevenSharesStayInStep() throws Exception {
        Properties[] three = launch("three", 3, 20, 9);
        for (int r = 1; r < 3; r++) {
            assertEquals(three[0].getProperty("trained"), three[r].getProperty("trained"), "rank " + r);
        }
        assertNotEquals(three[0].getProperty("initial"), three[0].getProperty("trained"));
    }

    /** Rank 1 stops taking part: rank 0's first collective fails after FLEET_TIMEOUT naming rank 1, and the job ends. */
    @Test
    void aStalledRankFailsTheOthersAfterTheTimeoutNamingIt() throws Exception {
        Path out = Files.createDirectories(work.resolve("stall-out"));
        LaunchedJob job = LaunchedJob.run(work.resolve("stall"), 2, Map.of("FLEET_TIMEOUT", "3", "PROBE_STALL_RANK", "1"),
                JOB_TIMEOUT, FleetProbe.class.getName(), out.toString(), "16", "1");
        assertNotEquals(0, job.exitCode(), job.describe());
        assertTrue(job.stderr().contains("failed: rank 0 exited with code 3 (a peer died or stalled)"), job.describe());
        String rank0 = Files.readString(job.logDir().resolve("workerlog.0"));
        assertTrue(rank0.contains("timed out after 3000 ms") && rank0.contains("ranks [1] did not take part"),
                "the timeout names the rank that did not come:\n" + job.describe());
    }

    /**
     * The several-rank run trained as the one-rank run did: every parameter and every step's loss within
     * {@link TrainingDrift#NOISE_FACTOR} times the float32 noise that the one-rank probe measured (its run started one
     * ulp away).
     */
    private static void assertSameTraining(Properties one, Properties many, String what) {
        TrainingRecord reference = record(one, "");
        TrainingDrift noise = TrainingDrift.between(reference, record(one, "noise."));
        TrainingDrift drift = TrainingDrift.between(reference, record(many, ""));
        assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), what + " against one rank: "
                + drift.summaryAgainst(noise));
    }

    /** The parameters ("name=[v, v, ...];...") and losses ("[l, l, ...]") a probe recorded under {@code prefix}. */
    private static TrainingRecord record(Properties p, String prefix) {
        Map<String, float[]> params = new LinkedHashMap<>();
        for (String dump : p.getProperty(prefix + "trained").split(";")) {
            String[] values = values(dump);
            float[] f = new float[values.length];
            for (int i = 0; i < f.length; i++) {
                f[i] = Float.parseFloat(values[i]);
            }
            params.put(dump.substring(0, dump.indexOf('=')), f);
        }
        String[] losses = values(p.getProperty(prefix + "losses"));
        return new TrainingRecord(params, Arrays.stream(losses).mapToDouble(Double::parseDouble).toArray());
    }

    private static String[] values(String dump) {
        return dump.substring(dump.indexOf('[') + 1, dump.lastIndexOf(']')).split(", ");
    }
}
