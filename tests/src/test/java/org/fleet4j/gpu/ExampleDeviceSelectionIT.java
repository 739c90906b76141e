package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.fleet4j.core.device.DeviceUnavailableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * mlp_perf in a fresh JVM with FLEET_DEVICE as fleetrun sets it: "gpu:0" trains on the GPU where there is one and
 * exits 2 naming the missing driver where there is none; a GPU the machine lacks exits 2 everywhere.
 */
class ExampleDeviceSelectionIT {
    @TempDir
    Path dir;

    private record Result(int exit, String output) {
    }

    private Result mlpPerf(String device) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path log = dir.resolve("out-" + device.replace(':', '_') + ".txt");
        ProcessBuilder pb = new ProcessBuilder(java.toString(), "--enable-native-access=ALL-UNNAMED",
                "--add-modules=jdk.incubator.vector", "-Dorg.bytedeco.javacpp.cachedir=" + dir.resolve("javacpp"),
                "-cp", System.getProperty("java.class.path"), "org.fleet4j.examples.MlpPerf",
                "--layers", "32,64,10", "--batch_size", "16", "--steps", "5", "--warmup", "2",
                "--log_dir", dir.resolve("log").toString())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("FLEET_DEVICE", device);
        pb.environment().put("FLEET_KERNEL_CACHE", dir.resolve("kernels").toString());
        Process p = pb.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("mlp_perf with FLEET_DEVICE=" + device + " did not finish in 120 s:\n"
                    + Files.readString(log, StandardCharsets.UTF_8));
        }
        return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    }

    private static String noGpuReason() {
        try {
            return GpuRuntime.deviceCount() > 0 ? null : "the driver sees no GPU";
        } catch (DeviceUnavailableException e) {
            return e.getMessage();
        }
    }

    @Test
    void gpuZeroTrainsOnTheGpuOrExitsTwoNamingWhatIsMissing() throws Exception {
        Result r = mlpPerf("gpu:0");
        if (noGpuReason() == null) {
            assertEquals(0, r.exit(), r.output());
            assertTrue(r.output().contains("mlp_perf: running on gpu:0"), r.output());
            assertTrue(r.output().contains("ms/step"), r.output());
        } else {
            assertEquals(2, r.exit(), r.output());
            assertTrue(r.output().contains("FLEET_DEVICE=gpu:0 asks for a device this process cannot use: "), r.output());
            assertTrue(r.output().contains("libcuda.so.1"), r.output());
            assertTrue(!r.output().contains("\tat org."), "a stack trace as the message:\n" + r.output());
        }
    }

    @Test
    void aGpuTheMachineLacksExitsTwo() throws Exception {
        Result r = mlpPerf("gpu:64");
        assertEquals(2, r.exit(), r.output());
        assertTrue(r.output().contains("FLEET_DEVICE=gpu:64"), r.output());
    }

    @Test
    void cpuRunsOnTheExecutor() throws Exception {
        Result r = mlpPerf("cpu");
        assertEquals(0, r.exit(), r.output());
        assertTrue(!r.output().contains("running on"), r.output());
        assertTrue(List.of(r.output().split("\n")).stream().anyMatch(l -> l.startsWith("mlp_perf: layers 32,64,10")),
                r.output());
    }
}
