package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two pods on two hosts (the network namespaces of {@link TwoHostNetwork}), each {@code bin/fleetrun mnist} with
 * exactly its pod's variables and the host names the operator's DNS would give resolvable there (/etc/hosts of each
 * namespace): the pod on host 1 finds its own address towards the master on host 0, and the two train mnist to where
 * one process on the whole batch gets. Skipped, with the reason, only for a user other than root.
 */
class TwoHostClusterIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);
    private static final String[] MNIST = {"--steps", "20", "--global_batch", "64", "--optimizer", "sgd"};

    private static TrainingRecord oneRank;
    private static TrainingDrift noise;

    @TempDir
    Path work;

    @BeforeAll
    static void trainOneRankAndMeasureItsNoise() {
        MnistEquivalence.Reference reference = MnistEquivalence.reference(MNIST);
        oneRank = reference.oneRank();
        noise = reference.noise();
    }

    static Stream<Arguments> schedulers() {
        return Stream.of(
                Arguments.of("PyTorchJob (Kubeflow training-operator)", Map.of("mnist-master-0", 0, "mnist-worker-0", 1),
                        List.of(pytorchJob(0), pytorchJob(1))),
                Arguments.of("Volcano", Map.of("mnist-worker-0.mnist", 0, "mnist-worker-1.mnist", 1),
                        List.of(volcano(0), volcano(1))));
    }

    private static Map<String, String> pytorchJob(int rank) {
        return Map.of("MASTER_ADDR", "mnist-master-0", "MASTER_PORT", "23456", "WORLD_SIZE", "2", "RANK", "" + rank,
                "PET_NPROC_PER_NODE", "1", "PET_NODE_RANK", "" + rank, "PET_NNODES", "2");
    }

    private static Map<String, String> volcano(int index) {
        return Map.of("VC_TASK_INDEX", "" + index, "VK_TASK_INDEX", "" + index, "VC_WORKER_HOSTS",
                "mnist-worker-0.mnist,mnist-worker-1.mnist", "VC_WORKER_NUM", "2", "HOSTNAME", "mnist-worker-" + index);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("schedulers")
    void twoPodsOnTwoHostsTrainAsOneJob(String scheduler, Map<String, Integer> names, List<Map<String, String>> pods)
            throws Exception {
        Path checkpoint = work.resolve("pods.safetensors");
        try (TwoHostNetwork net = TwoHostNetwork.createOrSkip()) {
            net.resolve(names);
            net.runLaunchers(work, host -> {
                List<String> cmd = new ArrayList<>(List.of(PodLaunchers.FLEETRUN.toString(), "--log_dir",
                        work.resolve("host" + host).toString(), "--jvm_args", "-XX:+UseSerialGC -Xmx512m", "mnist"));
                cmd.addAll(List.of(MNIST));
                cmd.addAll(List.of("--save_checkpoint", checkpoint.toString()));
                return cmd;
            }, pods::get, JobToken.random().text(), JOB_TIMEOUT, () -> TwoHostNetwork.logs(work));
            String err = Files.readString(work.resolve("launcher1.err"));
            assertTrue(err.contains("fleetrun: cluster: " + scheduler + ": this launcher is node 1 of 2"), err);
            // host 1's rank listened on host 1's own address, found towards the master on host 0
            String endpoints = Files.readString(work.resolve("host1/endpoints.log"));
            assertTrue(endpoints.contains("rank 1 local_rank 0 " + (scheduler.equals("Volcano") ? "mnist-worker-1.mnist"
                    : net.address(1))), endpoints);
        }
        TrainingDrift drift = TrainingDrift.between(oneRank, MnistEquivalence.record(work.resolve("host0"), checkpoint));
        assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), scheduler + " on two hosts against one"
                + " process: " + drift.summaryAgainst(noise));
    }
}
