package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two processes, each {@code bin/fleetrun mnist} with exactly the variables one pod or task of a scheduler gets (the
 * issue's reproduction for a PyTorchJob: without detection they trained as two one-rank jobs), on loopback with the
 * scheduler's host names resolvable; together they train mnist to where one process on the whole global batch gets
 * (every parameter and step's loss within {@link TrainingDrift#NOISE_FACTOR} times the float32 noise).
 */
class KubernetesOperatorsIT {
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

    /** Each scheduler: its name as the launcher reports it, the host names it gives, and the variables of pods 0 and 1. */
    static Stream<Arguments> schedulers() {
        int port = FreePorts.consecutive(1);
        String p = "" + port;
        return Stream.of(
                // training-operator v1 pkg/controller.v1/pytorch/envvar.go: a Master and one Worker, nprocPerNode 1
                Arguments.of("PyTorchJob (Kubeflow training-operator)", List.of("mnist-master-0"), List.of(
                        Map.of("MASTER_ADDR", "mnist-master-0", "MASTER_PORT", p, "WORLD_SIZE", "2", "RANK", "0",
                                "PET_NPROC_PER_NODE", "1", "PET_NODE_RANK", "0", "PET_NNODES", "2", "PYTHONUNBUFFERED", "0"),
                        Map.of("MASTER_ADDR", "mnist-master-0", "MASTER_PORT", p, "WORLD_SIZE", "2", "RANK", "1",
                                "PET_NPROC_PER_NODE", "1", "PET_NODE_RANK", "1", "PET_NNODES", "2", "PYTHONUNBUFFERED", "0"))),
                // pkg/controller.v1/paddlepaddle/envvar.go: worker 0 gets its own pod IP as PADDLE_MASTER, the others
                // worker 0's name; no rank, which the pod's host name gives
                Arguments.of("PaddleJob (Kubeflow training-operator)", List.of("mnist-worker-0"), List.of(
                        Map.of("PADDLE_MASTER", "127.0.0.1:" + p, "PADDLE_NNODES", "2", "PADDLE_JOB_ID", "mnist",
                                "POD_IP_DUMMY", "127.0.0.1", "HOSTNAME", "mnist-worker-0"),
                        Map.of("PADDLE_MASTER", "mnist-worker-0:" + p, "PADDLE_NNODES", "2", "PADDLE_JOB_ID", "mnist",
                                "HOSTNAME", "mnist-worker-1"))),
                // Volcano's env and svc plugins; MASTER_PORT from the manifest
                Arguments.of("Volcano", List.of("mnist-worker-0.mnist", "mnist-worker-1.mnist"), List.of(
                        volcano(0, p), volcano(1, p))),
                // a JobSet of one replicated job "workers" with 2 pods, the labels passed in with the downward API
                Arguments.of("JobSet", List.of("mnist-workers-0-0.mnist", "mnist-workers-0-1.mnist"), List.of(
                        jobSet(0, p), jobSet(1, p))));
    }

    private static Map<String, String> volcano(int index, String port) {
        return Map.of("VC_TASK_INDEX", "" + index, "VK_TASK_INDEX", "" + index, "VC_WORKER_HOSTS",
                "mnist-worker-0.mnist,mnist-worker-1.mnist", "VC_WORKER_NUM", "2", "HOSTNAME", "mnist-worker-" + index,
                "MASTER_PORT", port);
    }

    private static Map<String, String> jobSet(int index, String port) {
        return Map.of("JOB_COMPLETION_INDEX", "" + index, "JOBSET_NAME", "mnist", "REPLICATED_JOB_NAME", "workers",
                "JOB_INDEX", "0", "REPLICATED_JOB_REPLICAS", "1", "PODS_PER_JOB", "2", "MASTER_PORT", port,
                "HOSTNAME", "mnist-workers-0-" + index);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("schedulers")
    void twoPodsTrainMnistAsOneJob(String scheduler, List<String> hostNames, List<Map<String, String>> pods) throws Exception {
        Path hosts = PodLaunchers.hostsFile(work, hostNames);
        Path checkpoint = work.resolve("pods.safetensors");
        List<String> args = new ArrayList<>(List.of(MNIST));
        args.addAll(List.of("--save_checkpoint", checkpoint.toString()));
        PodLaunchers.run(work, pods, hosts, JobToken.random().text(), pod -> PodLaunchers.mnist(work, pod, args),
                MnistEquivalence.JOB_TIMEOUT);
        for (int pod = 0; pod < 2; pod++) {
            String err = Files.readString(work.resolve("pod" + pod + ".err"));
            assertTrue(err.contains("fleetrun: cluster: " + scheduler + ": this launcher is node " + pod + " of 2"), err);
        }
        assertEquals(2, new ObjectMapper().readTree(work.resolve("pod0/summary.json").toFile()).get("world_size").asInt());
        assertTrue(Files.readString(work.resolve("pod1/workerlog.1")).contains("mnist: rank 1 done"));
        TrainingDrift drift = TrainingDrift.between(oneRank, MnistEquivalence.record(work.resolve("pod0"), checkpoint));
        assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), scheduler + " pods against one process: "
                + drift.summaryAgainst(noise));
    }
}
