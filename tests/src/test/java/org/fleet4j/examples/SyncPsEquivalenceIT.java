package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sync-mode parameter-server training through the real bin/fleetrun (servers and workers in their own JVMs, gRPC on
 * loopback) against the same program in one process on the global batch ({@link SyncPsProgram}, a user's jar): SGD,
 * 1 server x 1 worker within 1e-5 relative, 2 servers x 2 workers within 1e-4 relative, for the global batch's loss of
 * every step and every parameter (relative to the parameter's largest magnitude); 2 x 2 also over protocol grpc++.
 */
class SyncPsEquivalenceIT {
    private static final int STEPS = 15;
    private static final int GLOBAL_BATCH = 32;
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);

    @TempDir
    static Path work;
    private static Path jar;
    private static Result single;

    @BeforeAll
    static void singleProcessRun() throws Exception {
        jar = ProgramJar.of(SyncPsProgram.class, work.resolve("jar/sync-ps.jar"));
        single = run("local", 1, List.of());
    }

    @Test
    void oneServerOneWorkerEqualsTheSingleProcessRun() throws Exception {
        Result ps = run("ps", 1, List.of("--server_num", "1", "--worker_num", "1"));
        assertClose(single, ps, 1e-5);
    }

    @Test
    void twoServersTwoWorkersEqualOneProcessOnTheGlobalBatch() throws Exception {
        Result ps = run("ps", 2, List.of("--server_num", "2", "--worker_num", "2"));
        assertClose(single, ps, 1e-4);
    }

    /** star_server: a step's tables to a server in one pull and one push, reads after its own writes. */
    @Test
    void twoServersTwoWorkersOverStarServerEqualOneProcessOnTheGlobalBatch() throws Exception {
        Result ps = run("ps", 2, List.of("--server_num", "2", "--worker_num", "2"), "star_server");
        assertClose(single, ps, 1e-4);
    }

    /** grpc++: pulls and pushes on the data ports, one connection per server network thread. */
    @Test
    void twoServersTwoWorkersOverGrpcppEqualOneProcessOnTheGlobalBatch() throws Exception {
        Result ps = run("ps", 2, List.of("--server_num", "2", "--worker_num", "2"), "grpc++");
        assertClose(single, ps, 1e-4);
    }

    private record Result(List<Double> losses, Map<String, double[]> params) {
    }

    private static Result run(String mode, int workers, List<String> launcherArgs) throws Exception {
        return run(mode, workers, launcherArgs, "grpc");
    }

    private static Result run(String mode, int workers, List<String> launcherArgs, String protocol) throws Exception {
        Path dir = work.resolve(mode + "-" + workers + "-" + launcherArgs.size() + "-" + protocol);
        Path out = dir.resolve("result.txt");
        FleetRunJob job = FleetRunJob.start(dir, workers, launcherArgs, jar.toString(), mode, out.toString(), "" + STEPS,
                "" + GLOBAL_BATCH, protocol);
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        if (!launcherArgs.isEmpty()) {
            for (int s = 0; s < Integer.parseInt(launcherArgs.get(1)); s++) {
                String log = Files.readString(job.logDir().resolve("serverlog." + s));
                assertTrue(log.contains("fleet: server " + s + " stopped by the workers"), log);
                assertTrue(log.contains(" over " + protocol + " ("), log);
            }
        }
        List<Double> losses = new ArrayList<>();
        Map<String, double[]> params = new LinkedHashMap<>();
        for (String line : Files.readAllLines(out)) {
            String[] f = line.split(" ");
            if (f[0].equals("loss")) {
                losses.add(Double.parseDouble(f[2]));
            } else {
                double[] v = new double[f.length - 2];
                for (int i = 0; i < v.length; i++) {
                    v[i] = Double.parseDouble(f[i + 2]);
                }
                params.put(f[1], v);
            }
        }
        return new Result(losses, params);
    }

    private static void assertClose(Result reference, Result ps, double tolerance) {
        assertEquals(STEPS, reference.losses().size());
        assertEquals(reference.losses().size(), ps.losses().size());
        for (int s = 0; s < STEPS; s++) {
            double a = reference.losses().get(s);
            double b = ps.losses().get(s);
            assertTrue(Math.abs(a - b) <= tolerance * Math.abs(a), "loss of step " + s + ": " + b + " vs " + a);
        }
        assertEquals(reference.params().keySet(), ps.params().keySet());
        assertTrue(reference.params().size() >= 6, "4 sparse tables and the MLP's weights and biases: " + reference.params().keySet());
        reference.params().forEach((name, want) -> {
            double[] got = ps.params().get(name);
            assertEquals(want.length, got.length, name);
            double scale = 0;
            double worst = 0;
            for (int i = 0; i < want.length; i++) {
                scale = Math.max(scale, Math.abs(want[i]));
                worst = Math.max(worst, Math.abs(want[i] - got[i]));
            }
            assertTrue(worst <= tolerance * scale, name + ": largest difference " + worst + " against magnitude " + scale);
        });
        assertTrue(reference.losses().get(STEPS - 1) < reference.losses().get(0), "the run trains: " + reference.losses());
    }
}
