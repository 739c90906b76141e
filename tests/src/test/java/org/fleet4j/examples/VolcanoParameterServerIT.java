package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A parameter-server job as a Volcano Job with a task "ps" (1 server) and a task "worker" (2 trainers), as
 * docs/examples/kubernetes/volcano-ps.yaml runs it: three processes, each {@code bin/fleetrun --strategy ps.yaml ctr}
 * with exactly the variables of its pod (VC_TASK_INDEX, VC_PS_HOSTS, VC_WORKER_HOSTS, the pod's HOSTNAME), on loopback
 * with the svc plugin's host names resolvable. The server's pod starts the server alone and ends when the trainers
 * stop it; the trainers train ctr against it to a useful AUC.
 */
class VolcanoParameterServerIT {
    private static final Duration TIMEOUT = Duration.ofMinutes(4);

    @TempDir
    Path work;

    private static Map<String, String> pod(String task, int index, int port) {
        return Map.of("VC_TASK_INDEX", "" + index, "VK_TASK_INDEX", "" + index, "VC_PS_HOSTS", "ctr-ps-0.ctr", "VC_PS_NUM", "1",
                "VC_WORKER_HOSTS", "ctr-worker-0.ctr,ctr-worker-1.ctr", "VC_WORKER_NUM", "2", "HOSTNAME", "ctr-" + task + "-" + index,
                "PADDLE_PORT", "" + port, "MASTER_PORT", "" + (port + 2));
    }

    @Test
    void aServerPodAndTwoWorkerPodsTrainCtr() throws Exception {
        Path data = work.resolve("data");
        FleetRunJob gen = FleetRunJob.start(work.resolve("gen"), 1, "ctr_data", "--rows", "8000", "--out", data.toString());
        assertEquals(0, gen.await(Duration.ofSeconds(120)), gen.describe());
        Path strategy = Files.writeString(work.resolve("ps.yaml"), "mode: ps\na_sync: false\n");
        // the server's port, the grpc++ data port after it (FLEET_PS_ENDPOINT_MAP), the trainers' master
        int port = FreePorts.consecutive(3);
        List<Map<String, String>> pods = List.of(pod("ps", 0, port), pod("worker", 0, port), pod("worker", 1, port));
        Path hosts = PodLaunchers.hostsFile(work, List.of("ctr-ps-0.ctr", "ctr-worker-0.ctr", "ctr-worker-1.ctr"));
        PodLaunchers.run(work, pods, hosts, JobToken.random().text(), pod -> List.of("--log_dir",
                work.resolve("pod" + pod).toString(), "--jvm_args", "-XX:+UseSerialGC -Xmx512m", "--strategy",
                strategy.toString(), "ctr", "--data_dir", data.toString(), "--batch_size", "128", "--optimizer", "adagrad",
                "--lr", "0.05"), TIMEOUT);
        String server = Files.readString(work.resolve("pod0.err"));
        assertTrue(server.contains("fleetrun: cluster: Volcano: this process is server 0 of 1 (ctr-ps-0.ctr:" + port
                + ") for 2 trainer(s) from Volcano; fleetrun starts it alone"), server);
        assertTrue(Files.exists(work.resolve("pod0/serverlog.0")), "the server's pod logs its server");
        assertTrue(Files.readString(work.resolve("pod2.err")).contains("this process is one rank of 2"));
        JsonNode summary = new ObjectMapper().readTree(work.resolve("pod1/summary.json").toFile());
        assertEquals(1, summary.get("servers").asInt(), summary.toString());
        assertEquals(2, summary.get("workers").asInt(), summary.toString());
        assertEquals("ps-sync", summary.get("mode").asText(), summary.toString());
        assertTrue(summary.get("auc").asDouble() > 0.6, "it learns: " + summary);
    }
}
