package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.launch.LaunchPlan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where a program will write is checked before its first step, in every mode and on every process that writes: a
 * parameter-server save folder nobody may create (under /sys) exits 2 before training on the trainers and on a server
 * alone, and {@code --export_onnx} into a missing folder is refused as {@code --save_checkpoint} is, leaving nothing.
 */
class OutputTargetCheckIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(2);
    /** Under sysfs: it exists, but nobody, root included, can create a file or a folder there. */
    private static final Path UNWRITABLE = Path.of("/sys/kernel/ck");

    @TempDir
    Path work;

    private Path data() throws Exception {
        Path out = work.resolve("data");
        FleetRunJob gen = FleetRunJob.start(work.resolve("gen"), 1, "ctr_data", "--rows", "3000", "--out", out.toString());
        assertEquals(0, gen.await(JOB_TIMEOUT), gen.describe());
        return out;
    }

    @Test
    void aParameterServerSaveFolderNobodyCanWriteExits2BeforeTheFirstStep() throws Exception {
        Path data = data();
        Path strategy = Files.writeString(work.resolve("ps.yaml"), "mode: ps\na_sync: false\n");
        FleetRunJob job = FleetRunJob.start(work.resolve("run"), 1, List.of("--server_num", "1", "--worker_num", "1",
                "--strategy", strategy.toString()), "ctr", "--data_dir", data.toString(), "--save_checkpoint",
                UNWRITABLE.toString());
        assertEquals(2, job.await(JOB_TIMEOUT), job.describe());
        String all = job.describe();
        assertTrue(all.contains("checkpoint " + UNWRITABLE + ": directory /sys/kernel does not let this user create files"), all);
        assertFalse(all.contains("epoch 1/1"), "no step was trained:\n" + all);
    }

    /** A server started by hand (Paddle's variables) checks the folder itself, before it serves. */
    @Test
    void aServerAloneRefusesAnUnwritableSaveFolderBeforeServing() throws Exception {
        Path data = data();
        String endpoint = "127.0.0.1:" + FreePorts.one();
        Path lib = Path.of("").toAbsolutePath().getParent().resolve("build/lib");
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow()));
        command.addAll(LaunchPlan.REQUIRED_JVM_FLAGS);
        command.addAll(List.of("-XX:+UseSerialGC", "-Xmx512m", "-cp", lib + File.separator + "*", Ctr.class.getName(),
                "--data_dir", data.toString(), "--save_checkpoint", UNWRITABLE.toString()));
        ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(work.resolve("server.out").toFile());
        b.environment().keySet().removeIf(k -> k.startsWith("FLEET_") || k.startsWith("PADDLE_") || k.equals("CLASSPATH"));
        b.environment().putAll(java.util.Map.of("TRAINING_ROLE", "PSERVER", "PADDLE_PSERVERS_IP_PORT_LIST", endpoint,
                "POD_IP", "127.0.0.1", "PADDLE_PORT", endpoint.substring(endpoint.indexOf(':') + 1),
                "PADDLE_TRAINERS_NUM", "1", "FLEET_STRATEGY", Files.writeString(work.resolve("ps.yaml"), "mode: ps\n").toString(),
                "FLEET_JOB_TOKEN", "a-job-token-of-enough-characters"));
        Process server = b.start();
        boolean exited = server.waitFor(JOB_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        if (!exited) {
            server.destroyForcibly().waitFor();
        }
        String out = Files.readString(work.resolve("server.out"));
        assertTrue(exited, "the server was still serving after " + JOB_TIMEOUT + ":\n" + out);
        assertEquals(2, server.exitValue(), out);
        assertTrue(out.contains("checkpoint " + UNWRITABLE + ": directory /sys/kernel does not let this user create files"), out);
    }

    @Test
    void exportOnnxIntoAMissingFolderIsRefusedAsSaveCheckpointIs() throws Exception {
        Path missing = work.resolve("missing");
        FleetRunJob onnx = FleetRunJob.start(work.resolve("onnx"), 1, "mnist", "--steps", "5", "--export_onnx",
                missing.resolve("model.onnx").toString());
        assertEquals(2, onnx.await(JOB_TIMEOUT), onnx.describe());
        assertTrue(onnx.stderr().contains("mnist: --export_onnx: ONNX model " + missing.resolve("model.onnx") + ": folder "
                + missing + " does not exist; create it first"), onnx.describe());
        FleetRunJob checkpoint = FleetRunJob.start(work.resolve("checkpoint"), 1, "mnist", "--steps", "5",
                "--save_checkpoint", missing.resolve("ck.safetensors").toString());
        assertEquals(2, checkpoint.await(JOB_TIMEOUT), checkpoint.describe());
        assertTrue(checkpoint.stderr().contains("directory " + missing + " does not exist; create it first"),
                checkpoint.describe());
        assertFalse(Files.exists(missing), "no folder was made");
        for (FleetRunJob job : List.of(onnx, checkpoint)) {
            assertFalse(Files.readString(job.logDir().resolve("workerlog.0")).contains("epoch 1/"), "no step was trained");
        }
    }
}
