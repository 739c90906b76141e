package org.fleet4j.collective;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two "hosts" on this machine: network namespaces joined by a veth pair, each with its own address, so the TCP and
 * hierarchical paths run over a real link between hosts. Skipped, with the reason, only for a user other than root, who
 * cannot make namespaces.
 */
class NetnsClusterTest {
    private static final String NS_PREFIX = "fleet4j-t" + ProcessHandle.current().pid() + "-";
    private static final String[] NS = {NS_PREFIX + "0", NS_PREFIX + "1"};
    private static final String[] IP = {"10.213." + ProcessHandle.current().pid() % 250 + ".1",
            "10.213." + ProcessHandle.current().pid() % 250 + ".2"};
    private static String skipReason;

    @TempDir
    Path logs;

    @BeforeAll
    static void makeHosts() {
        try {
            sh("ip", "netns", "add", NS[0]);
            sh("ip", "netns", "add", NS[1]);
            String veth0 = "f4j" + ProcessHandle.current().pid() % 100000 + "a";
            String veth1 = "f4j" + ProcessHandle.current().pid() % 100000 + "b";
            sh("ip", "link", "add", veth0, "type", "veth", "peer", "name", veth1);
            sh("ip", "link", "set", veth0, "netns", NS[0]);
            sh("ip", "link", "set", veth1, "netns", NS[1]);
            for (int i = 0; i < 2; i++) {
                String dev = i == 0 ? veth0 : veth1;
                sh("ip", "-n", NS[i], "addr", "add", IP[i] + "/24", "dev", dev);
                sh("ip", "-n", NS[i], "link", "set", dev, "up");
                sh("ip", "-n", NS[i], "link", "set", "lo", "up");
            }
        } catch (Exception e) {
            skipReason = "network namespaces unavailable here (" + e.getMessage() + "); multi-host tests skipped";
            System.err.println(skipReason);
            removeHosts();
        }
    }

    @AfterAll
    static void removeHosts() {
        for (String ns : NS) {
            try {
                sh("ip", "netns", "del", ns);
            } catch (Exception ignored) {
                // not created, or already gone
            }
        }
    }

    private static void sh(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + " did not finish in 20 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out);
        }
    }

    private RankProcesses start(int[] nodeOf, String scenario, Map<String, String> env) throws IOException {
        // root can make namespaces (iproute2 is installed by scripts/install-deps.sh): there a failure is a failure
        assertTrue(skipReason == null || !"root".equals(System.getProperty("user.name")), skipReason);
        Assumptions.assumeTrue(skipReason == null, skipReason);
        List<List<String>> prefix = new ArrayList<>();
        String[] hosts = new String[nodeOf.length];
        for (int r = 0; r < nodeOf.length; r++) {
            prefix.add(List.of("ip", "netns", "exec", NS[nodeOf[r]]));
            hosts[r] = IP[nodeOf[r]];
        }
        return new RankProcesses(nodeOf.length, RankMain.class, List.of(scenario), env, logs, nodeOf, prefix, hosts);
    }

    @Test
    void oneRankPerHostUsesTcpAcrossTheLink() throws Exception {
        try (RankProcesses ranks = start(new int[] {0, 1}, "ops", Map.of("FLEET_TEST_DTYPES", "f32,bf16"))) {
            for (int r = 0; r < 2; r++) {
                assertEquals(0, ranks.exitCode(r, Duration.ofSeconds(120)), ranks.log(r));
                assertTrue(ranks.log(r).contains("BACKEND tcp"), ranks.log(r));
            }
        }
    }

    @Test
    void twoRanksPerHostUseTheHierarchicalPath() throws Exception {
        try (RankProcesses ranks = start(new int[] {0, 0, 1, 1}, "ops", Map.of("FLEET_TEST_DTYPES", "f32,i64"))) {
            for (int r = 0; r < 4; r++) {
                assertEquals(0, ranks.exitCode(r, Duration.ofSeconds(150)), ranks.log(r));
                assertTrue(ranks.log(r).contains("BACKEND hierarchical"), ranks.log(r));
            }
        }
    }

    @Test
    void killingAHostsRankFailsTheOtherHost() throws Exception {
        try (RankProcesses ranks = start(new int[] {0, 1}, "loop", Map.of("FLEET_TEST_TIMEOUT_MS", "60000"))) {
            ranks.awaitLog(0, "ITER 3", Duration.ofSeconds(90));
            ranks.awaitLog(1, "ITER 3", Duration.ofSeconds(90));
            ranks.kill(1);
            assertEquals(3, ranks.exitCode(0, Duration.ofSeconds(30)), ranks.log(0));
            assertTrue(ranks.log(0).contains("rank 1"), ranks.log(0));
        }
    }
}
