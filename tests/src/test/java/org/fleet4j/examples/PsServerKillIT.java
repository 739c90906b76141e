package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * kill -9 of a parameter server (over every protocol, in sync and in async mode) or a worker (in sync and in async
 * mode) in the middle of training ({@link SyncPsProgram}): under bin/fleetrun the job ends within 10 s, non-zero,
 * naming the killed process, with nothing left running; every worker's log names a killed server's endpoint, and in
 * sync mode the server's log names the worker its barrier waited for. Started by hand with Paddle's variables, the
 * worker fails within 10 s naming the killed server's endpoint.
 */
class PsServerKillIT {
    private static final Duration TEN_SECONDS = Duration.ofSeconds(10);
    /** Bounds the start of a job's three JVMs and its first steps, on a machine shared by other builds. */
    private static final Duration START_TIMEOUT = Duration.ofSeconds(180);
    private static final String FOREVER = "100000000";

    @TempDir
    static Path work;
    private static Path jar;

    @BeforeAll
    static void programJar() throws IOException {
        jar = ProgramJar.of(SyncPsProgram.class, work.resolve("jar/sync-ps.jar"));
    }

    /** Every protocol, in sync and in async mode between them (each job costs three JVMs). */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"grpc, ps", "grpc++, ps-async", "star_server, ps", "star_server_lite, ps-async"})
    void fleetrunEndsTheJobNamingTheKilledServer(String protocol, String mode) throws Exception {
        Path dir = work.resolve("server-killed-" + protocol + "-" + mode);
        FleetRunJob job = FleetRunJob.start(dir, 2, List.of("--server_num", "1", "--worker_num", "2"), jar.toString(),
                mode, dir.resolve("result.txt").toString(), FOREVER, "8", protocol, "local_loss");
        awaitText(job.logDir().resolve("workerlog.1"), "step 3 ", job.launcher());
        awaitText(job.logDir().resolve("workerlog.0"), "step 3 ", job.launcher());
        List<ProcessHandle> all = job.launcher().descendants().toList();
        ProcessHandle server = serverOf(all);
        String endpoint = endpointOf(server);
        long[] logged = {logLength(job, "workerlog.0"), logLength(job, "workerlog.1")};
        server.destroyForcibly();
        long killed = System.nanoTime();
        int code = job.await(TEN_SECONDS.plusSeconds(5));
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - killed);
        assertNotEquals(0, code, job.describe());
        assertTrue(seconds <= TEN_SECONDS.toSeconds(), "fleetrun took " + seconds + " s");
        String err = job.stderr();
        assertTrue(err.contains("fleetrun: server 0 (pid " + server.pid() + ") was killed by signal 9"), err);
        assertTrue(err.contains("job default failed: server 0 was killed by signal 9"), err);
        for (int w = 0; w < 2; w++) {
            String after = Files.readString(job.logDir().resolve("workerlog." + w)).substring((int) logged[w]);
            assertTrue(after.contains(endpoint), "worker " + w + "'s log names the killed server " + endpoint
                    + " after the kill:\n" + after);
        }
        assertNothingLeft(all);
    }

    @ParameterizedTest
    @ValueSource(strings = {"ps", "ps-async"})
    void fleetrunEndsTheJobNamingAKilledWorker(String mode) throws Exception {
        Path dir = work.resolve("worker-killed-" + mode);
        FleetRunJob job = FleetRunJob.start(dir, 2, List.of("--server_num", "1", "--worker_num", "2"), jar.toString(),
                mode, dir.resolve("result.txt").toString(), FOREVER, "8", "grpc", "local_loss");
        awaitText(job.logDir().resolve("workerlog.1"), "step 3 ", job.launcher());
        List<ProcessHandle> all = job.launcher().descendants().toList();
        ProcessHandle worker = job.rankProcess(1);
        worker.destroyForcibly();
        long killed = System.nanoTime();
        int code = job.await(TEN_SECONDS.plusSeconds(5));
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - killed);
        assertNotEquals(0, code, job.describe());
        assertTrue(seconds <= TEN_SECONDS.toSeconds(), "fleetrun took " + seconds + " s");
        assertTrue(job.stderr().contains("job default failed: rank 1 was killed by signal 9"), job.stderr());
        if (mode.equals("ps")) {
            // worker 0 waits in server 0's step barrier for the dead worker; stopped, the server says whom it waited for
            String serverLog = Files.readString(job.logDir().resolve("serverlog.0"));
            assertTrue(serverLog.contains(": stopped while barrier 'step' (generation ")
                    && serverLog.contains(": waiting for worker [1] (arrived: [0])"), "server 0's log names the missing"
                    + " worker 1:\n" + serverLog);
        }
        assertNothingLeft(all);
    }

    @Test
    void aWorkerStartedByHandFailsWithinTenSecondsNamingTheServersEndpoint() throws Exception {
        Path dir = Files.createDirectories(work.resolve("by-hand"));
        int port = FreePorts.one();
        String endpoint = "127.0.0.1:" + port;
        String token = JobToken.random().text();
        Map<String, String> common = Map.of("PADDLE_PSERVERS_IP_PORT_LIST", endpoint, "PADDLE_TRAINERS_NUM", "1",
                JobToken.ENV, token);
        Process server = start(dir, "server", common, Map.of("TRAINING_ROLE", "PSERVER", "POD_IP", "127.0.0.1",
                "PADDLE_PORT", "" + port));
        Process worker = start(dir, "worker", common, Map.of("TRAINING_ROLE", "TRAINER", "PADDLE_TRAINER_ID", "0"));
        try {
            awaitText(dir.resolve("worker.out"), "step 3 ", worker);
            server.destroyForcibly();
            assertTrue(worker.waitFor(TEN_SECONDS.toMillis(), TimeUnit.MILLISECONDS),
                    "the worker still runs 10 s after its server was killed");
            String out = Files.readString(dir.resolve("worker.out"));
            assertNotEquals(0, worker.exitValue(), out);
            assertTrue(out.contains(endpoint), "the worker's error names " + endpoint + ":\n" + out);
        } finally {
            worker.destroyForcibly();
            server.destroyForcibly();
        }
    }

    private static Process start(Path dir, String name, Map<String, String> common, Map<String, String> own)
            throws IOException {
        return HandStartedProcess.start(jar, dir, name, common, own, "ps", dir.resolve("result.txt").toString(), FOREVER, "8");
    }

    private static void assertNothingLeft(List<ProcessHandle> processes) {
        for (ProcessHandle p : processes) {
            assertFalse(p.isAlive(), "process " + p.pid() + " " + p.info().commandLine().orElse("") + " outlived the job");
        }
    }

    private static long logLength(FleetRunJob job, String log) throws IOException {
        return Files.readString(job.logDir().resolve(log)).length();
    }

    /** POD_IP:PADDLE_PORT of a server started by fleetrun, from its environment (Linux /proc). */
    private static String endpointOf(ProcessHandle server) throws IOException {
        String ip = null;
        String port = null;
        for (String entry : new String(Files.readAllBytes(Path.of("/proc", "" + server.pid(), "environ"))).split("\0")) {
            if (entry.startsWith("POD_IP=")) {
                ip = entry.substring("POD_IP=".length());
            } else if (entry.startsWith("PADDLE_PORT=")) {
                port = entry.substring("PADDLE_PORT=".length());
            }
        }
        assertTrue(ip != null && port != null, "the server's environment has POD_IP and PADDLE_PORT");
        return ip + ":" + port;
    }

    private static ProcessHandle serverOf(List<ProcessHandle> processes) throws IOException {
        for (ProcessHandle h : processes) {
            Path environ = Path.of("/proc", "" + h.pid(), "environ");
            if (Files.isReadable(environ) && List.of(new String(Files.readAllBytes(environ)).split("\0"))
                    .contains("TRAINING_ROLE=PSERVER")) {
                return h;
            }
        }
        throw new AssertionError("no parameter server among " + processes);
    }

    /**
     * Polls {@code file} until it holds {@code text}; fails naming the file when {@code process} ends or time runs out
     * (then killing the job first).
     */
    private static void awaitText(Path file, String text, Process process) throws Exception {
        long until = System.nanoTime() + START_TIMEOUT.toNanos();
        while (System.nanoTime() < until) {
            if (Files.exists(file) && Files.readString(file).contains(text)) {
                return;
            }
            if (!process.isAlive()) {
                throw new AssertionError("ended before '" + text + "' appeared in " + file + ":\n"
                        + (Files.exists(file) ? Files.readString(file) : "(no file)"));
            }
            process.waitFor(50, TimeUnit.MILLISECONDS);
        }
        // the job trains FOREVER steps: stop it, or it outlives the test
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        throw new AssertionError("'" + text + "' did not appear in " + file + " within " + START_TIMEOUT
                + "; the job was killed");
    }
}
