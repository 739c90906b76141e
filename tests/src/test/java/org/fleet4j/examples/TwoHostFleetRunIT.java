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
import org.fleet4j.cluster.JobToken;
import org.fleet4j.core.drift.TrainingDrift;
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
        TwoHostNetwork net = TwoHostNetwork.createOrSkip();
        JsonNode twoHosts;
        Path twoHostsCheckpoint = work.resolve("two-hosts.safetensors");
        try (net) {
            String ips = net.address(0) + "," + net.address(1);
            String token = JobToken.random().text(); // a job on two hosts needs one token that both launchers share
            net.runLaunchers(work, host -> {
                List<String> cmd = new ArrayList<>(List.of(root.resolve("bin/fleetrun").toString(), "--ips", ips,
                        "--rank", "" + host, "--nproc_per_node", "1", "--log_dir", work.resolve("host" + host).toString(),
                        "--jvm_args", "-XX:+UseSerialGC -Xmx512m"));
                cmd.addAll(List.of(MNIST));
                cmd.addAll(List.of("--save_checkpoint", twoHostsCheckpoint.toString()));
                return cmd;
            }, token, JOB_TIMEOUT, () -> TwoHostNetwork.logs(work));
            twoHosts = new ObjectMapper().readTree(work.resolve("host0/summary.json").toFile());
            String rank1 = Files.readString(work.resolve("host1/workerlog.1"));
            assertTrue(rank1.contains("mnist: rank 1 done"), rank1);
            // host 1's rank listened on its own address and met the master on host 0's, across the link
            String endpoints = Files.readString(work.resolve("host1/endpoints.log"));
            assertTrue(endpoints.contains(net.address(1)) && endpoints.contains(net.address(0) + ":"), endpoints);
        }
        assertEquals(2, twoHosts.get("world_size").asInt());
        assertEquals(32, twoHosts.get("batch_size").asInt());
        MnistEquivalence.Reference reference = MnistEquivalence.reference(MNIST_ARGS);
        TrainingDrift noise = reference.noise();
        TrainingDrift drift = TrainingDrift.between(reference.oneRank(), MnistEquivalence.record(work.resolve("host0"),
                twoHostsCheckpoint));
        assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), "two hosts against one process: "
                + drift.summaryAgainst(noise));
    }
}
