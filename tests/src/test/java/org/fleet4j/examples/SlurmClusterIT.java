package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Slurm (Debian's slurm-wlm, one node, started by the test, {@link LocalSlurm}): {@code sbatch
 * docs/examples/slurm/train.sbatch} runs {@code srun} with 2 tasks, each {@code bin/fleetrun mnist}, which find their
 * ranks, the world and the master in the tasks' SLURM_* variables and train mnist together; the test reads the job's
 * output file and rank 0's summary. Skipped, saying why, where slurmctld or munged is not installed.
 */
class SlurmClusterIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(4);
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    @TempDir
    Path work;

    @Test
    void sbatchOfTheExampleScriptTrainsMnistOnTwoTasks() throws Exception {
        try (LocalSlurm slurm = LocalSlurm.startOrSkip(work.resolve("slurm"))) {
            Path output = work.resolve("job.out");
            List<String> command = new ArrayList<>(List.of("sbatch", "--wait", "--chdir=" + work, "--output=" + output,
                    "--export=ALL,FLEET4J_HOME=" + ROOT, ROOT.resolve("docs/examples/slurm/train.sbatch").toString(),
                    "--steps", "20", "--global_batch", "64", "--optimizer", "sgd"));
            ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(work.resolve("sbatch.out").toFile());
            b.environment().keySet().removeIf(k -> k.startsWith("SLURM_") || k.startsWith("FLEET_") || k.equals("CLASSPATH"));
            b.environment().putAll(slurm.environment());
            b.environment().put("JAVA_HOME", System.getProperty("java.home"));
            Process sbatch = b.start();
            boolean ended = sbatch.waitFor(JOB_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            String submitted = Files.readString(work.resolve("sbatch.out"));
            String job = Files.exists(output) ? Files.readString(output) : "(no job output)";
            if (!ended) {
                sbatch.destroyForcibly();
                throw new AssertionError("the Slurm job still ran after " + JOB_TIMEOUT + "\n" + submitted + job + slurm.logs());
            }
            assertEquals(0, sbatch.exitValue(), submitted + "\n" + job + "\n" + slurm.logs());
            String id = submitted.replaceAll("(?s).*Submitted batch job (\\d+).*", "$1").strip();
            for (int task = 0; task < 2; task++) {
                assertTrue(job.contains("fleetrun: cluster: Slurm: this process is one rank of 2; fleetrun starts it alone,"
                        + " master"), job);
            }
            assertTrue(job.contains("[rank 0] mnist:"), "rank 0's output is in the job's output file\n" + job);
            Path logs = work.resolve("log/slurm-" + id);
            JsonNode summary = new ObjectMapper().readTree(logs.resolve("task0/summary.json").toFile());
            assertEquals(2, summary.get("world_size").asInt(), summary.toString());
            assertEquals(32, summary.get("batch_size").asInt(), summary.toString());
            assertTrue(Files.readString(logs.resolve("task1/workerlog.1")).contains("mnist: rank 1 done"));
        }
    }
}
