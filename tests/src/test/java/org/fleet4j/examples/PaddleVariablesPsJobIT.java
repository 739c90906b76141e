package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.FreePorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sync parameter-server job (1 server, 2 trainers of {@link SyncPsProgram}) started by hand with only Paddle's
 * variables, as Paddle's PS jobs are started. Without a job token every process refuses to start, saying how to make
 * one; with FLEET_INSECURE=1 the job trains to the end, and every process warns that it is not protected.
 */
class PaddleVariablesPsJobIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(2);
    private static final List<String> NAMES = List.of("server", "trainer0", "trainer1");

    @TempDir
    Path work;

    /** Starts the three processes with Paddle's variables and {@code extra}; returns each one's exit code and output. */
    private List<String> runJob(Map<String, String> extra, List<Integer> codes) throws Exception {
        Path jar = ProgramJar.of(SyncPsProgram.class, work.resolve("jar/sync-ps.jar"));
        int first = FreePorts.consecutive(3);
        String server = "127.0.0.1:" + first;
        String trainers = "127.0.0.1:" + (first + 1) + ",127.0.0.1:" + (first + 2);
        Map<String, String> common = new HashMap<>(Map.of("PADDLE_PSERVERS_IP_PORT_LIST", server, "PADDLE_TRAINERS_NUM", "2",
                "PADDLE_TRAINER_ENDPOINTS", trainers));
        common.putAll(extra);
        String[] args = {"ps", work.resolve("result.txt").toString(), "6", "8"};
        List<Process> processes = new ArrayList<>();
        List<String> logs = new ArrayList<>();
        try {
            processes.add(HandStartedProcess.start(jar, work, "server", common, Map.of("TRAINING_ROLE", "PSERVER",
                    "POD_IP", "127.0.0.1", "PADDLE_PORT", "" + first), args));
            for (int t = 0; t < 2; t++) {
                processes.add(HandStartedProcess.start(jar, work, "trainer" + t, common, Map.of("TRAINING_ROLE", "TRAINER",
                        "PADDLE_TRAINER_ID", "" + t), args));
            }
            for (int i = 0; i < processes.size(); i++) {
                Path out = work.resolve(NAMES.get(i) + ".out");
                assertTrue(processes.get(i).waitFor(JOB_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS),
                        NAMES.get(i) + " still runs after " + JOB_TIMEOUT + ":\n" + Files.readString(out));
                codes.add(processes.get(i).exitValue());
                logs.add(Files.readString(out));
            }
            return logs;
        } finally {
            processes.forEach(Process::destroyForcibly);
        }
    }

    @Test
    void aJobWithOnlyPaddlesVariablesIsRefusedSayingHowToMakeAToken() throws Exception {
        List<Integer> codes = new ArrayList<>();
        List<String> logs = runJob(Map.of(), codes);
        for (int i = 0; i < logs.size(); i++) {
            String log = logs.get(i);
            // the program's own main, started by hand, ends as the JVM ends it on an exception (under fleetrun: 2)
            assertNotEquals(0, codes.get(i), NAMES.get(i) + ":\n" + log);
            assertTrue(log.contains("no job token: a job of 3 processes needs the same secret in every process"), log);
            assertTrue(log.contains("head -c 32 /dev/urandom | base64 > job.token") && log.contains("FLEET_INSECURE=1"), log);
        }
        assertTrue(!Files.exists(work.resolve("result.txt")), "nothing trained");
    }

    @Test
    void anInsecureJobTrainsAndEveryProcessWarns() throws Exception {
        List<Integer> codes = new ArrayList<>();
        List<String> logs = runJob(Map.of("FLEET_INSECURE", "1"), codes);
        for (int i = 0; i < logs.size(); i++) {
            String log = logs.get(i);
            assertEquals(0, codes.get(i), NAMES.get(i) + ":\n" + log);
            assertTrue(log.contains("fleet: WARNING: FLEET_INSECURE=1: this job of 3 processes runs without a job token"), log);
        }
        assertEquals(6, Files.readAllLines(work.resolve("result.txt")).stream().filter(l -> l.startsWith("loss ")).count());
    }
}
