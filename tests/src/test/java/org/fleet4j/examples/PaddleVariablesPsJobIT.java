package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.FreePorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sync parameter-server job (1 server, 2 trainers of {@link SyncPsProgram}) started by hand with only Paddle's
 * variables, as Paddle's PS jobs are started: no FLEET_JOB_TOKEN. It trains to the end, and every process says in one
 * line that the job is not protected.
 */
class PaddleVariablesPsJobIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(2);

    @TempDir
    Path work;

    @Test
    void aJobWithOnlyPaddlesVariablesTrains() throws Exception {
        Path jar = ProgramJar.of(SyncPsProgram.class, work.resolve("jar/sync-ps.jar"));
        int first = FreePorts.consecutive(3);
        int[] ports = {first, first + 1, first + 2};
        String server = "127.0.0.1:" + ports[0];
        String trainers = "127.0.0.1:" + ports[1] + ",127.0.0.1:" + ports[2];
        Map<String, String> common = Map.of("PADDLE_PSERVERS_IP_PORT_LIST", server, "PADDLE_TRAINERS_NUM", "2",
                "PADDLE_TRAINER_ENDPOINTS", trainers);
        String[] args = {"ps", work.resolve("result.txt").toString(), "6", "8"};
        List<Process> processes = new ArrayList<>();
        try {
            processes.add(HandStartedProcess.start(jar, work, "server", common, Map.of("TRAINING_ROLE", "PSERVER",
                    "POD_IP", "127.0.0.1", "PADDLE_PORT", "" + ports[0]), args));
            for (int t = 0; t < 2; t++) {
                processes.add(HandStartedProcess.start(jar, work, "trainer" + t, common, Map.of("TRAINING_ROLE", "TRAINER",
                        "PADDLE_TRAINER_ID", "" + t), args));
            }
            List<String> names = List.of("server", "trainer0", "trainer1");
            for (int i = 0; i < processes.size(); i++) {
                Path out = work.resolve(names.get(i) + ".out");
                assertTrue(processes.get(i).waitFor(JOB_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS),
                        names.get(i) + " still runs after " + JOB_TIMEOUT + ":\n" + Files.readString(out));
                String log = Files.readString(out);
                assertEquals(0, processes.get(i).exitValue(), names.get(i) + ":\n" + log);
                assertTrue(log.contains("fleet: no FLEET_JOB_TOKEN: this parameter-server job is not protected"), log);
            }
            assertEquals(6, Files.readAllLines(work.resolve("result.txt")).stream().filter(l -> l.startsWith("loss ")).count());
        } finally {
            processes.forEach(Process::destroyForcibly);
        }
    }
}
