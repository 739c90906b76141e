package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** bin/fleetrun's dry run in a scheduler's environment: the cluster found, the role of each rank, and the errors. */
class DetectedClusterTest {
    private record Run(int code, String out, String err) {
    }

    private static Run dryRun(Map<String, String> env, String... flags) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        List<String> args = new ArrayList<>(List.of("--dry_run"));
        args.addAll(List.of(flags));
        int code = FleetRun.run(args.toArray(String[]::new), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), env);
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static Map<String, String> pytorchJobWorker(int nproc) {
        return new HashMap<>(Map.of("MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "23456", "WORLD_SIZE", "" + 2 * nproc,
                "RANK", "1", "PET_NPROC_PER_NODE", "" + nproc, "PET_NODE_RANK", "1", "PET_NNODES", "2"));
    }

    @Test
    void theDryRunSaysWhichClusterAndTheRoleOfEveryRank() {
        Run run = dryRun(pytorchJobWorker(2));
        assertEquals(0, run.code(), run.err());
        assertTrue(run.out().contains("cluster: PyTorchJob (Kubeflow training-operator): this launcher is node 1 of 2 and"
                + " starts 2 rank(s), master 127.0.0.1:23456"), run.out());
        assertTrue(run.out().contains("read: PET_NPROC_PER_NODE=2 WORLD_SIZE=4 PET_NNODES=2 PET_NODE_RANK=1 RANK=1 MASTER_ADDR=127.0.0.1"), run.out());
        assertTrue(run.out().contains("rank 2 of 4: node 1 of 2, local rank 0 of 2, endpoint 127.0.0.1:6170")
                && run.out().contains("rank 3 of 4: node 1 of 2, local rank 1 of 2"), run.out());
        assertTrue(run.out().contains("2 nodes x 2 ranks per node = 4 ranks on cpu"), "the strategy is planned for the job's"
                + " world: " + run.out());
    }

    @Test
    void flagsWinOverTheEnvironment() {
        Run ranks = dryRun(pytorchJobWorker(2), "--nproc_per_node", "3");
        assertTrue(ranks.out().contains("starts 3 rank(s)"), ranks.out());
        Run nodes = dryRun(pytorchJobWorker(2), "--nnodes", "1");
        assertTrue(nodes.out().contains("cluster: from the flags: 1 node(s)"), nodes.out());
        Run none = dryRun(Map.of("PATH", "/bin"));
        assertTrue(none.out().contains("cluster: none found in the environment"), none.out());
    }

    @Test
    void anIncompleteClusterIsOneLineAndExitTwo() {
        Run run = dryRun(Map.of("WORLD_SIZE", "2", "RANK", "1"));
        assertEquals(2, run.code(), run.out());
        assertTrue(run.err().startsWith("fleetrun: PyTorchJob (Kubeflow training-operator): environment variable MASTER_ADDR"
                + " is not set"), run.err());
        assertEquals(1, run.err().strip().lines().count(), run.err());
        Run slurm = dryRun(Map.of("SLURM_JOB_ID", "12", "SLURM_JOB_NODELIST", "n1"));
        assertEquals(2, slurm.code());
        assertTrue(slurm.err().contains("SLURM_PROCID is not set"), slurm.err());
    }

    @Test
    void aTaskOfSeveralOnItsNodeIsOneRank() {
        Map<String, String> env = Map.of("SLURM_JOB_ID", "7", "SLURM_PROCID", "1", "SLURM_NTASKS", "2", "SLURM_NODEID", "0",
                "SLURM_LOCALID", "1", "SLURM_TASKS_PER_NODE", "2", "SLURM_JOB_NODELIST", "localhost");
        Run run = dryRun(env);
        assertEquals(0, run.code(), run.err());
        assertTrue(run.out().contains("cluster: Slurm: this process is one rank of 2; fleetrun starts it alone, master"
                + " localhost:12007"), run.out());
        assertTrue(run.out().contains("rank 1 of 2: node 1 of 2, local rank 0 of 1"), run.out());
        Run more = dryRun(env, "--nproc_per_node", "2");
        assertEquals(2, more.code());
        assertTrue(more.err().contains("--nproc_per_node 2: Slurm started this process as one rank"), more.err());
    }
}
