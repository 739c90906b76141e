package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The communicator knobs in real rank processes on loopback, each rank training on its share of every batch: with
 * nccl_comm_num, buckets spread over two rings that Fleet opened; with use_hierarchical_allreduce, four ranks posing as
 * two nodes of two reduce in stages on the inner and leaders rings; with find_unused_parameters, a head whose gradient
 * each rank skips on every other step joins a bucket. Each time the compiled program ends where the uncompiled one with
 * flat per-gradient allreduces does, on every rank.
 */
class CompilerKnobsFleetTest {
    private static final int STEPS = 6;

    @TempDir
    Path dir;

    /** Starts {@code nodes x perNode} ranks of {@link CompilerKnobsProbe} with the strategy; returns each rank's lines. */
    private List<List<String>> launch(int nodes, int perNode, String strategyYaml, String net) throws Exception {
        return launch(nodes, perNode, strategyYaml, net, Map.of());
    }

    /** As above, with further environment variables for every rank. */
    private List<List<String>> launch(int nodes, int perNode, String strategyYaml, String net, Map<String, String> extraEnv)
            throws Exception {
        Path strategy = Files.writeString(dir.resolve("strategy.yaml"), strategyYaml);
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        int port = FreePorts.one();
        int world = nodes * perNode;
        String job = "knobs-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        String token = JobToken.random().text();
        List<Process> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < world; r++) {
                ProcessBuilder pb = new ProcessBuilder(javaBin, "--enable-native-access=ALL-UNNAMED",
                        "--add-modules=jdk.incubator.vector", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m",
                        "-cp", System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
                        CompilerKnobsProbe.class.getName(), dir.toString(), "" + STEPS, net);
                Map<String, String> env = new HashMap<>(Map.of("FLEET_RANK", "" + r, "FLEET_WORLD_SIZE", "" + world,
                        "FLEET_LOCAL_RANK", "" + r % perNode, "FLEET_LOCAL_WORLD_SIZE", "" + perNode,
                        "FLEET_NNODES", "" + nodes, "FLEET_NODE_RANK", "" + r / perNode,
                        "FLEET_MASTER", "127.0.0.1:" + port, "FLEET_HOST", "127.0.0.1",
                        "FLEET_JOB_ID", job, "FLEET_STRATEGY", strategy.toString()));
                env.put(JobToken.ENV, token);
                env.put("FLEET_TIMEOUT", "40");
                env.putAll(extraEnv);
                pb.environment().putAll(env);
                pb.redirectErrorStream(true).redirectOutput(dir.resolve("rank-" + r + ".log").toFile());
                ranks.add(pb.start());
            }
            for (int r = 0; r < world; r++) {
                Process p = ranks.get(r);
                assertTrue(p.waitFor(120, TimeUnit.SECONDS), "rank " + r + " still running after 120 s; log:\n" + log(r));
                assertEquals(0, p.exitValue(), "rank " + r + " failed; log:\n" + log(r));
            }
        } finally {
            ranks.forEach(Process::destroyForcibly);
        }
        List<List<String>> lines = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            lines.add(Files.readAllLines(dir.resolve("rank-" + r + ".values")));
        }
        return lines;
    }

    private String log(int r) throws Exception {
        Path f = dir.resolve("rank-" + r + ".log");
        return Files.exists(f) ? Files.readString(f) : "(no log)";
    }

    /**
     * On every rank the compiled run (line 1: the losses of its share, then the parameters) trains as the reference
     * (line 0): every parameter and every step's loss within {@link TrainingDrift#NOISE_FACTOR} times the drift of
     * the reference started a few ulps away (line 3); all ranks end with the very same parameters.
     */
    private static void assertCompiledTrainsAsTheReference(List<List<String>> ranks) {
        Map<String, float[]> params0 = record(ranks.getFirst().get(1)).parameters();
        for (int r = 0; r < ranks.size(); r++) {
            TrainingRecord reference = record(ranks.get(r).get(0));
            TrainingRecord compiled = record(ranks.get(r).get(1));
            TrainingDrift noise = TrainingDrift.between(reference, record(ranks.get(r).get(3)));
            TrainingDrift drift = TrainingDrift.between(reference, compiled);
            assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), "rank " + r
                    + ", compiled against flat: " + drift.summaryAgainst(noise));
            for (var p : params0.entrySet()) {
                assertTrue(Arrays.equals(p.getValue(), compiled.parameters().get(p.getKey())), "rank " + r + " ends with"
                        + " another " + p.getKey() + " than rank 0");
            }
        }
    }

    /** A probe's line "LOSS ... | name=v,v,... name=...". */
    private static TrainingRecord record(String line) {
        String[] halves = line.trim().split(" \\| ");
        double[] losses = Arrays.stream(halves[0].split(" ")).mapToDouble(Double::parseDouble).toArray();
        Map<String, float[]> params = new LinkedHashMap<>();
        for (String entry : halves[1].split(" ")) {
            String[] cells = entry.substring(entry.indexOf('=') + 1).split(",");
            float[] values = new float[cells.length];
            for (int i = 0; i < cells.length; i++) {
                values[i] = Float.parseFloat(cells[i]);
            }
            params.put(entry.substring(0, entry.indexOf('=')), values);
        }
        return new TrainingRecord(params, losses);
    }

    @Test
    void twoCommunicatorsTakeTheBucketsInTurnOnTwoRanks() throws Exception {
        List<List<String>> ranks = launch(1, 2, "nccl_comm_num: 2\nfuse_grad_size_in_TFLOPS: 2\n"
                + "last_comm_group_size_MB: 0.00001\n", "mlp");
        assertCompiledTrainsAsTheReference(ranks);
        String ops = ranks.getFirst().get(2);
        assertEquals(List.of("c_allreduce@0", "c_allreduce@1", "c_allreduce@0", "c_allreduce@1"),
                List.of(ops.split(",")).stream().filter(o -> o.startsWith("c_allreduce")).toList(), ops);
        String log = log(0);
        assertTrue(log.contains("fleet: 2 rings open on rank 0\n  ring 0: group 'default', shm, 2 ranks\n"
                + "  ring 1: group 'ring1', shm, 2 ranks\n"), log);
        assertTrue(log.contains("6 c_allreduce ops -> 4 bucket(s) on 2 ring(s)"), log);
        assertTrue(log.contains("bucket 1: 2 gradients, 0.00 MB, ring 1"), log);
    }

    @Test
    void bucketsOnTwoRingsAreInFlightTogetherWhenAllreducesDoNotWaitOnTwoRanks() throws Exception {
        List<List<String>> ranks = launch(1, 2, "nccl_comm_num: 2\nsync_nccl_allreduce: false\nfuse_grad_size_in_TFLOPS: 2\n"
                + "last_comm_group_size_MB: 0.00001\n", "mlp");
        assertCompiledTrainsAsTheReference(ranks);
        List<String> ops = List.of(ranks.getFirst().get(2).split(","));
        assertEquals(List.of("c_allreduce_start@0", "c_allreduce_start@1", "c_allreduce_start@0", "c_allreduce_start@1"),
                ops.stream().filter(o -> o.startsWith("c_allreduce")).toList(), ops.toString());
        int secondStart = ops.indexOf("c_allreduce_start@1");
        int firstWait = ops.indexOf(ops.stream().filter(o -> o.startsWith("c_wait")).findFirst().orElseThrow());
        assertTrue(secondStart < firstWait, "ring 1's bucket starts before ring 0's is waited for: " + ops);
    }

    @Test
    void fourRanksAsTwoNodesReduceInsideEachNodeAndAcrossTheLeaders() throws Exception {
        List<List<String>> ranks = launch(2, 2, "use_hierarchical_allreduce: true\nhierarchical_allreduce_inter_nranks: 2\n"
                + "nccl_comm_num: 2\nfuse_grad_size_in_TFLOPS: 2\nlast_comm_group_size_MB: 0.00001\n", "mlp");
        assertCompiledTrainsAsTheReference(ranks);
        String ops = ranks.getFirst().get(2);
        assertFalse(ops.contains("c_allreduce"), ops);
        assertEquals(List.of("c_reduce@2", "c_leaders_allreduce@4", "c_broadcast@2", "c_reduce@3", "c_leaders_allreduce@5",
                "c_broadcast@3"), List.of(ops.split(",")).stream().filter(o -> o.startsWith("c_r") || o.startsWith("c_l")
                || o.startsWith("c_b")).toList().subList(0, 6), ops);
        String log = log(0);
        assertTrue(log.contains("  use_hierarchical_allreduce: 37 ops -> 45 ops\n    4 c_allreduce ops over inner groups"
                + " of 2 ranks, form auto (rsag from 256 KB): 4 reduce / leaders allreduce / broadcast, 0 reduce-scatter"),
                log);
        assertTrue(log.contains("fleet: 8 rings open on rank 0\n  ring 0: group 'default', hierarchical, 4 ranks\n"
                + "  ring 1: group 'ring1', hierarchical, 4 ranks\n  ring 2: group 'default/[0,1]#1', shm, 2 ranks\n"
                + "  ring 3: group 'default/[0,1]#2', shm, 2 ranks\n  ring 4: group 'default/[0,2]#1', tcp, 2 ranks\n"), log);
    }

    @Test
    void fourRanksAsTwoNodesReduceScatterInsideEachNodeAllreduceShardsAcrossAndGatherOddSizedBuckets() throws Exception {
        List<List<String>> ranks = launch(2, 2, "use_hierarchical_allreduce: true\nhierarchical_allreduce_inter_nranks: 2\n"
                + "nccl_comm_num: 2\nfuse_grad_size_in_TFLOPS: 2\nlast_comm_group_size_MB: 0.00001\n", "mlp",
                Map.of("FLEET_HIERARCHICAL_FORM", "rsag"));
        assertCompiledTrainsAsTheReference(ranks);
        for (int r = 0; r < 4; r++) {
            String ops = ranks.get(r).get(2);
            assertEquals(List.of("c_reducescatter@2", "c_allreduce@6", "c_allgather@2", "c_reducescatter@3", "c_allreduce@7",
                    "c_allgather@3"), List.of(ops.split(",")).stream().filter(o -> o.startsWith("c_r") || o.startsWith("c_a"))
                    .toList().subList(0, 6), "rank " + r + ": " + ops);
        }
        String log = log(0);
        assertTrue(log.contains("4 c_allreduce ops over inner groups of 2 ranks, form rsag: 0 reduce / leaders allreduce"
                + " / broadcast, 4 reduce-scatter / cross allreduce / allgather"), log);
        assertTrue(log.contains(" elements, padded), c_allreduce of it on cross ring"), "an odd-sized bucket: " + log);
        assertTrue(log.contains("fleet: 8 rings open on rank 0\n"), log);
        assertTrue(log.contains("  ring 6: group 'default/[0,2]#2', tcp, 2 ranks\n  ring 7: group 'default/[0,2]#4', tcp,"
                + " 2 ranks\n"), log);
    }

    @Test
    void fourRanksAsTwoNodesOverlapEachBucketsCrossAllreduceWithTheNextBucketsReduceScatter() throws Exception {
        List<List<String>> ranks = launch(2, 2, "use_hierarchical_allreduce: true\nhierarchical_allreduce_inter_nranks: 2\n"
                + "sync_nccl_allreduce: false\nfuse_grad_size_in_TFLOPS: 2\nlast_comm_group_size_MB: 0.00001\n", "mlp",
                Map.of("FLEET_HIERARCHICAL_FORM", "rsag"));
        assertCompiledTrainsAsTheReference(ranks);
        List<String> ops = List.of(ranks.getFirst().get(2).split(","));
        List<String> collectives = ops.stream().filter(o -> o.startsWith("c_r") || o.startsWith("c_a") || o.startsWith("c_w"))
                .toList();
        assertEquals(List.of("c_reducescatter@1", "c_allreduce_start@3", "c_reducescatter@1", "c_allreduce_start@3",
                "c_wait@3", "c_allgather@1"), collectives.subList(0, 6), ops.toString());
        assertEquals(4, collectives.stream().filter(o -> o.equals("c_allreduce_start@3")).count(), ops.toString());
    }

    @Test
    void fourRanksAsTwoNodesPipelineBfloat16BucketsWithTheirCastBackAfterTheGather() throws Exception {
        // the buckets travel as bfloat16, so the noise is that of a start one bfloat16 ulp (2^16 float32 ulps) away
        List<List<String>> ranks = launch(2, 2, "use_hierarchical_allreduce: true\nhierarchical_allreduce_inter_nranks: 2\n"
                + "fp16_allreduce: true\nsync_nccl_allreduce: false\nfuse_grad_size_in_TFLOPS: 2\n"
                + "last_comm_group_size_MB: 0.00001\n", "mlp", Map.of("FLEET_HIERARCHICAL_FORM", "rsag",
                "PROBE_NOISE_ULPS", "" + (1 << 16)));
        assertCompiledTrainsAsTheReference(ranks);
        List<String> ops = List.of(ranks.getFirst().get(2).split(","));
        List<String> stages = ops.stream().filter(o -> o.startsWith("c_r") || o.startsWith("c_a") || o.startsWith("c_w")
                || o.equals("allreduce_cast")).toList();
        assertEquals(List.of("allreduce_cast", "c_reducescatter@1", "c_allreduce_start@3", "allreduce_cast",
                "c_reducescatter@1", "c_allreduce_start@3", "c_wait@3", "c_allgather@1", "allreduce_cast"),
                stages.subList(0, 9), ops.toString());
    }

    @Test
    void aGradientEachRankSkipsOnEveryOtherStepStillJoinsABucketOnTwoRanks() throws Exception {
        List<List<String>> ranks = launch(1, 2, "find_unused_parameters: true\nfuse_grad_size_in_MB: 1\n", "aux");
        assertCompiledTrainsAsTheReference(ranks);
        String ops = ranks.getFirst().get(2);
        assertEquals(1, List.of(ops.split(",")).stream().filter(o -> o.startsWith("c_allreduce")).count(), ops);
        assertTrue(ops.contains("fill_constant,fill_constant,conditional_begin"), ops);
        assertTrue(log(0).contains("2 of 6 allreduced gradients may be missing on a step"), log(0));
    }
}
