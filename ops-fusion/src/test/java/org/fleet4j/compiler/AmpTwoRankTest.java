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
import org.fleet4j.core.ir.Program;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real rank processes on loopback train the MLP with amp (bfloat16) and bucketed allreduces, each on half of
 * every batch; at one step only rank 1's half holds an inf. Because the gradients are checked after the allreduce,
 * both ranks skip that step and halve the scale, stay bit-identical, and end where one process training on the whole
 * batches with amp ends: every float persistable within {@link TrainingDrift#NOISE_FACTOR} times the drift of that
 * one-process training started one bfloat16 ulp away.
 */
class AmpTwoRankTest {
    private static final int STEPS = 6;
    private static final int POISONED_STEP = 3;

    @TempDir
    Path dir;

    @Test
    void bothRanksSkipTheStepWhoseInfOnlyOneRankSawAndMatchOneProcess() throws Exception {
        launch(dir);
        assertTrue(log(dir, 0).contains("bfloat16 compute in {matmul=3}"), log(dir, 0));
        String r0 = Files.readString(dir.resolve("rank-0.values"));
        assertEquals(r0, Files.readString(dir.resolve("rank-1.values")), "rank 0 and rank 1 end bit-identical");
        Map<String, float[]> twoRanks = Nets.parseValues(r0);
        assertEquals(512f, twoRanks.get(AmpPass.LOSS_SCALING)[0], "the scale halved once, on both ranks");
        TrainingRecord single = singleProcess(0);
        // the matmuls round to bfloat16, so the noise is that of a start one bfloat16 ulp (2^16 float32 ulps) away
        TrainingDrift noise = TrainingDrift.between(single, singleProcess(1 << 16));
        TrainingDrift drift = TrainingDrift.between(single, new TrainingRecord(twoRanks, new double[0]));
        assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR),
                "two ranks against one process on the whole batches: " + drift.summaryAgainst(noise));
    }

    /**
     * The same compiled MLP on one process over the whole batches (the same inf at the same step), its initial
     * parameters moved {@code ulps} float32 ulps ({@link RoundingNoise}).
     */
    private static TrainingRecord singleProcess(int ulps) {
        Nets.Net net = AmpRankTraining.net(false);
        Program main = Pipeline.forStrategy(EffectiveStrategy.resolve(AmpRankTraining.strategy(), new World(1, 1, "cpu")))
                .run(net.main()).program();
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(main.startupProgram(), scope);
        RoundingNoise.perturbParameters(main, scope, ulps, 1);
        for (int step = 0; step < STEPS; step++) {
            exe.run(main, scope, AmpRankTraining.batch(step, POISONED_STEP), List.of());
        }
        return new TrainingRecord(Nets.floatPersistables(main, scope), new double[0]);
    }

    private static void launch(Path dir) throws Exception {
        String javaBin = ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        int port = FreePorts.one();
        String job = "amp-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        String token = JobToken.random().text();
        List<Process> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                ProcessBuilder pb = new ProcessBuilder(javaBin, "--enable-native-access=ALL-UNNAMED",
                        "--add-modules=jdk.incubator.vector", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
                        System.getProperty("java.class.path"), AmpRankTraining.class.getName(),
                        Integer.toString(STEPS), Integer.toString(POISONED_STEP));
                pb.environment().putAll(Map.of("FLEET_RANK", "" + r, "FLEET_WORLD_SIZE", "2",
                        "FLEET_LOCAL_RANK", "" + r, "FLEET_LOCAL_WORLD_SIZE", "2", "FLEET_NODE_RANK", "0",
                        "FLEET_MASTER", "127.0.0.1:" + port, "FLEET_HOST", "127.0.0.1", "FLEET_JOB_ID", job,
                        "FLEET_LOG_DIR", dir.toString()));
                pb.environment().put(JobToken.ENV, token);
                pb.redirectErrorStream(true).redirectOutput(dir.resolve("rank-" + r + ".log").toFile());
                ranks.add(pb.start());
            }
            for (int r = 0; r < 2; r++) {
                Process p = ranks.get(r);
                assertTrue(p.waitFor(120, TimeUnit.SECONDS), "rank " + r + " still running after 120 s; log:\n" + log(dir, r));
                assertEquals(0, p.exitValue(), "rank " + r + " failed; log:\n" + log(dir, r));
            }
        } finally {
            ranks.forEach(Process::destroyForcibly);
        }
    }

    private static String log(Path dir, int r) throws Exception {
        File f = dir.resolve("rank-" + r + ".log").toFile();
        return f.exists() ? Files.readString(f.toPath()) : "(no log)";
    }
}
