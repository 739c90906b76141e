package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.core.drift.RoundingNoise;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.optim.Adam;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real rank processes on loopback, each training on half of every batch with a real allreduce: the compiled
 * program (op fusion, buckets, fused optimizer) ends where the uncompiled one does, on both ranks, and both equal one
 * process training on the whole batches; with sync_batch_norm, two ranks normalise as one process on the whole batch.
 */
class TwoRankCompilationTest {
    private static final int STEPS = 6;

    @TempDir
    Path dir;

    /** Starts two ranks of {@link RankTraining} with {@code args} and waits for both to exit 0. */
    private void launch(String... args) throws Exception {
        String javaBin = ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        int port = FreePorts.one();
        String job = "compiler-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        String token = JobToken.random().text();
        List<Process> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                List<String> cmd = new ArrayList<>(List.of(javaBin, "--enable-native-access=ALL-UNNAMED",
                        "--add-modules=jdk.incubator.vector", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
                        System.getProperty("java.class.path"), RankTraining.class.getName()));
                cmd.addAll(List.of(args));
                ProcessBuilder pb = new ProcessBuilder(cmd);
                pb.environment().putAll(Map.of("FLEET_RANK", "" + r, "FLEET_WORLD_SIZE", "2",
                        "FLEET_LOCAL_RANK", "" + r, "FLEET_LOCAL_WORLD_SIZE", "2", "FLEET_NODE_RANK", "0",
                        "FLEET_MASTER", "127.0.0.1:" + port, "FLEET_HOST", "127.0.0.1",
                        "FLEET_JOB_ID", job,
                        "FLEET_LOG_DIR", dir.toString()));
                pb.environment().put(JobToken.ENV, token);
                pb.redirectErrorStream(true).redirectOutput(dir.resolve("rank-" + r + ".log").toFile());
                ranks.add(pb.start());
            }
            for (int r = 0; r < 2; r++) {
                Process p = ranks.get(r);
                assertTrue(p.waitFor(120, TimeUnit.SECONDS), "rank " + r + " still running after 120 s; log:\n" + log(r));
                assertEquals(0, p.exitValue(), "rank " + r + " failed; log:\n" + log(r));
            }
        } finally {
            ranks.forEach(Process::destroyForcibly);
        }
    }

    @Test
    void compiledAndUncompiledAgreeOnTwoRanksAndWithOneRankOnTheWholeBatch() throws Exception {
        launch(Integer.toString(STEPS));
        String report = log(0);
        assertTrue(report.contains("c_allreduce ops -> 3 bucket(s)"), report);
        List<String> r0 = Files.readAllLines(dir.resolve("rank-0.values"));
        List<String> r1 = Files.readAllLines(dir.resolve("rank-1.values"));
        Nets.Net net = Nets.mlp("relu", new int[]{16, 12}, p -> new Adam(0.02));
        TrainingRecord single = singleProcess(net, 0);
        TrainingDrift noise = TrainingDrift.between(single, singleProcess(net, 1));
        assertSameTraining(single, noise, Nets.parseValues(r0.get(0)), "uncompiled, rank 0 against one process on the whole batches");
        assertSameTraining(single, noise, Nets.parseValues(r0.get(1)), "compiled, rank 0 against one process on the whole batches");
        assertEquals(r0.get(1), r1.get(1), "compiled, rank 0 against rank 1");
    }

    @Test
    void syncBatchNormOnTwoRanksEqualsBatchNormOfOneProcessOnTheWholeBatch() throws Exception {
        launch(Integer.toString(STEPS), "sync_batch_norm");
        assertTrue(log(0).contains("takes its statistics over all ranks"), log(0));
        String rank0 = Files.readAllLines(dir.resolve("rank-0.values")).get(0);
        String rank1 = Files.readAllLines(dir.resolve("rank-1.values")).get(0);
        Nets.Net net = RankTraining.bnNet(false);
        TrainingRecord single = singleProcess(net, 0);
        TrainingDrift noise = TrainingDrift.between(single, singleProcess(net, 1));
        assertSameTraining(single, noise, Nets.parseValues(rank0),
                "sync batch norm, rank 0, against one process (parameters and running statistics)");
        assertEquals(rank0, rank1, "rank 0 against rank 1");
    }

    /**
     * Every float persistable of the two-rank run is within {@link TrainingDrift#NOISE_FACTOR} times the float32 noise
     * of the one-process training (its drift from the same training started one ulp away): the half-batch sums round
     * differently from whole-batch ones, a real mistake moves the values far beyond that.
     */
    private static void assertSameTraining(TrainingRecord single, TrainingDrift noise, Map<String, float[]> ranks, String what) {
        TrainingDrift drift = TrainingDrift.between(single, new TrainingRecord(ranks, new double[0]));
        assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), what + ": " + drift.summaryAgainst(noise));
    }

    private String log(int r) throws Exception {
        File f = dir.resolve("rank-" + r + ".log").toFile();
        return f.exists() ? Files.readString(f.toPath()) : "(no log)";
    }

    /**
     * A network trained by one process on the whole 16-sample batches, its initial parameters moved {@code ulps} ulps
     * ({@link RoundingNoise}); its float persistables at the end.
     */
    private static TrainingRecord singleProcess(Nets.Net net, int ulps) {
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(net.startup(), scope);
        RoundingNoise.perturbParameters(net.main(), scope, ulps, 1);
        for (int step = 0; step < STEPS; step++) {
            exe.run(net.main(), scope, Nets.batch(step), List.of());
        }
        return new TrainingRecord(Nets.floatPersistables(net.main(), scope), new double[0]);
    }
}
