package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.fleet4j.collective.JobToken;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/fleetrun on two hosts: one launcher per network namespace ({@code --ips A,B --rank i --nproc_per_node 1}), the
 * two ranks training mnist data-parallel over a veth link, end where one process on the whole batch ends (every
 * parameter and every step's loss within {@link TrainingDrift#NOISE_FACTOR} times the float32 noise). Skipped,
 * with the reason, only for a user other than root, who cannot make namespaces.
 */
class TwoHostFleetRunIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);
    private static final String[] MNIST = {"mnist", "--steps", "20", "--global_batch", "64", "--optimizer", "sgd"};
    private static final String[] MNIST_ARGS = Arrays.copyOfRange(MNIST, 1, MNIST.length);

    @TempDir
    Path work;

    /** The repository root: the nearest folder up from here with bin/fleetrun. */
    private static Path root() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isExecutable(p.resolve("bin/fleetrun"))) {
                return p;
            }
        }
        return null;
    }

    private static boolean hasJars(Path lib) throws IOException {
        if (!Files.isDirectory(lib)) {
            return false;
        }
        try (var jars = Files.list(lib)) {
            return jars.anyMatch(j -> j.getFileName().toString().startsWith("fleet4j-examples-"));
        }
    }

    @Test
    void oneLauncherPerHostTrainsMnistToWhereOneProcessGets() throws Exception {
        Path root = root();
        assertTrue(root != null && hasJars(root.resolve("build/lib")),
                "bin/fleetrun has no build/lib jars to run: the examples module's package phase fills them before this test");
        TwoHostNetwork net;
        try {
            net = TwoHostNetwork.create();
        } catch (IOException e) {
            // root can make namespaces (iproute2 is installed by scripts/install-deps.sh): there a failure is a failure
            if ("root".equals(System.getProperty("user.name"))) {
                throw new AssertionError("root could not make network namespaces", e);
            }
            Assumptions.abort("network namespaces need root (" + e.getMessage() + "); two-host test skipped");
            return;
        }
        JsonNode twoHosts;
        Path twoHostsCheckpoint = work.resolve("two-hosts.safetensors");
        try (net) {
            String ips = net.address(0) + "," + net.address(1);
            List<Process> launchers = new ArrayList<>();
            String token = JobToken.random().text(); // a job on two hosts needs one token that both launchers share
            for (int host = 0; host < 2; host++) {
                List<String> cmd = new ArrayList<>(List.of(root.resolve("bin/fleetrun").toString(), "--ips", ips,
                        "--rank", "" + host, "--nproc_per_node", "1", "--log_dir", work.resolve("host" + host).toString(),
                        "--jvm_args", "-XX:+UseSerialGC -Xmx512m"));
                cmd.addAll(List.of(MNIST));
                cmd.addAll(List.of("--save_checkpoint", twoHostsCheckpoint.toString()));
                ProcessBuilder b = new ProcessBuilder(net.inHost(host, cmd)).directory(work.toFile())
                        .redirectOutput(work.resolve("launcher" + host + ".out").toFile())
                        .redirectError(work.resolve("launcher" + host + ".err").toFile());
                b.environment().put("JAVA_HOME", System.getProperty("java.home"));
                b.environment().put(JobToken.ENV, token);
                launchers.add(b.start());
            }
            for (int host = 0; host < 2; host++) {
                Process p = launchers.get(host);
                if (!p.waitFor(JOB_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    launchers.forEach(l -> {
                        l.descendants().forEach(ProcessHandle::destroyForcibly);
                        l.destroyForcibly();
                    });
                    throw new AssertionError("the launcher on host " + host + " still ran after " + JOB_TIMEOUT + "\n" + logs());
                }
                assertEquals(0, p.exitValue(), "launcher on host " + host + "\n" + logs());
            }
            twoHosts = new ObjectMapper().readTree(work.resolve("host0/summary.json").toFile());
            String rank1 = Files.readString(work.resolve("host1/workerlog.1"));
            assertTrue(rank1.contains("mnist: rank 1 done"), rank1);
            // host 1's rank listened on its own address and met the master on host 0's, across the link
            String endpoints = Files.readString(work.resolve("host1/endpoints.log"));
            assertTrue(endpoints.contains(net.address(1)) && endpoints.contains(net.address(0) + ":"), endpoints);
        }
        assertEquals(2, twoHosts.get("world_size").asInt());
        assertEquals(32, twoHosts.get("batch_size").asInt());
        TrainingRecord one = MnistEquivalence.train(work, "one", 1, List.of(), MNIST_ARGS);
        List<String> oneUlpAway = new ArrayList<>(List.of(MNIST_ARGS));
        oneUlpAway.addAll(List.of("--perturb_init_ulps", "1"));
        TrainingDrift noise = TrainingDrift.between(one, MnistEquivalence.train(work, "noise", 1, List.of(),
                oneUlpAway.toArray(String[]::new)));
        TrainingDrift drift = TrainingDrift.between(one, MnistEquivalence.record(work.resolve("host0"), twoHostsCheckpoint));
        assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), "two hosts against one process: "
                + drift.summaryAgainst(noise));
    }

    private String logs() throws IOException {
        StringBuilder s = new StringBuilder();
        try (var files = Files.walk(work)) {
            for (Path f : files.filter(Files::isRegularFile).filter(f -> !f.toString().endsWith(".png") && !f.toString().endsWith(".safetensors")).sorted().toList()) {
                s.append("--- ").append(work.relativize(f)).append(":\n").append(Files.readString(f)).append('\n');
            }
        }
        return s.toString();
    }
}
