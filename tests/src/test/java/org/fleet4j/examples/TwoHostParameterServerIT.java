package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.fleet4j.cluster.JobToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/fleetrun --servers A:P,B:P --workers A:Q,B:Q on two hosts (network namespaces joined by a veth link): the same
 * lists go to the launcher of each host, which starts the server and the trainer whose ip is its own; the sync job
 * ({@link SyncPsProgram}, 2 servers x 2 trainers) trains as the same job on one host does (every step's loss within
 * 1e-5 relative). The namespaces are fresh, so the fixed ports inside them are free. Skipped, with the reason, only for
 * a user other than root, who cannot make namespaces.
 */
class TwoHostParameterServerIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);
    private static final String STEPS = "6";
    private static final String GLOBAL_BATCH = "8";

    @TempDir
    Path work;

    @Test
    void eachHostsLauncherStartsItsOwnServerAndTrainer() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        Path jar = ProgramJar.of(SyncPsProgram.class, work.resolve("jar/sync-ps.jar"));
        TwoHostNetwork net = TwoHostNetwork.createOrSkip();
        Path twoHosts = work.resolve("two-hosts.txt");
        try (net) {
            String servers = net.address(0) + ":7000," + net.address(1) + ":7000";
            String workers = net.address(0) + ":7001," + net.address(1) + ":7001";
            String token = JobToken.random().text(); // both launchers' processes must share one token
            net.runLaunchers(work, host -> {
                List<String> cmd = List.of(root.resolve("bin/fleetrun").toString(), "--servers", servers, "--workers", workers,
                        "--log_dir", work.resolve("host" + host).toString(), "--jvm_args", "-XX:+UseSerialGC -Xmx512m",
                        jar.toString(), "ps", twoHosts.toString(), STEPS, GLOBAL_BATCH);
                return cmd;
            }, token, JOB_TIMEOUT, () -> TwoHostNetwork.logs(work));
            for (int host = 0; host < 2; host++) {
                String server = Files.readString(work.resolve("host" + host + "/serverlog." + host));
                assertTrue(server.contains("on " + net.address(host) + ":7000 over grpc"), server);
                assertTrue(Files.exists(work.resolve("host" + host + "/workerlog." + host)), TwoHostNetwork.logs(work));
            }
        }
        FleetRunJob oneHost = FleetRunJob.start(work.resolve("one-host"), 2, List.of("--server_num", "2", "--worker_num", "2"),
                jar.toString(), "ps", work.resolve("one-host.txt").toString(), STEPS, GLOBAL_BATCH);
        assertEquals(0, oneHost.await(JOB_TIMEOUT), oneHost.describe());
        List<Double> expected = losses(work.resolve("one-host.txt"));
        List<Double> actual = losses(twoHosts);
        assertEquals(Integer.parseInt(STEPS), actual.size(), actual.toString());
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(expected.get(i), actual.get(i), 1e-5 * Math.abs(expected.get(i)), "loss of step " + i
                    + ": two hosts " + actual + ", one host " + expected);
        }
    }

    private static List<Double> losses(Path result) throws IOException {
        return Files.readAllLines(result).stream().filter(l -> l.startsWith("loss "))
                .map(l -> Double.parseDouble(l.split(" ")[2])).toList();
    }
}
