package org.fleet4j.launch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.fleet4j.text.Quoted;

/**
 * The devices the ranks of this node use: the CPU, or one GPU per rank ({@code FLEET_DEVICE_ID}).
 *
 * @param gpuIds empty for the CPU; otherwise the device id of each local rank, in local-rank order
 */
public record DeviceSelection(List<Integer> gpuIds) {
    public static final DeviceSelection CPU = new DeviceSelection(List.of());
    private static final Path NVIDIA_PROC = Path.of("/proc/driver/nvidia/gpus");

    public DeviceSelection {
        gpuIds = List.copyOf(gpuIds);
    }

    public boolean isGpu() {
        return !gpuIds.isEmpty();
    }

    /** "gpu" or "cpu", the device kind the strategy dry run is told about. */
    public String kind() {
        return isGpu() ? "gpu" : "cpu";
    }

    /** The device of one local rank as fleet-core's {@code Devices.forThisProcess} reads it: "cpu" or "gpu:N". */
    public String deviceOf(int localRank) {
        return isGpu() ? "gpu:" + gpuIds.get(localRank) : "cpu";
    }

    /**
     * Parses {@code --devices}: {@code cpu}, {@code gpu} (every visible GPU, or the first
     * {@code --nproc_per_node} of them), or GPU ids such as {@code 0,1}.
     *
     * @param nprocPerNode the {@code --nproc_per_node} given, or null when it was left out
     */
    public static DeviceSelection parse(String value, Integer nprocPerNode) {
        return parse(value, nprocPerNode, false);
    }

    /**
     * As {@link #parse(String, Integer)}; {@code plan} (the dry run) plans a GPU world without looking for GPUs, so a
     * CPU-only machine can show what a job would do on GPUs: {@code gpu} means {@code --nproc_per_node} GPUs (or
     * one), ids are taken as given.
     */
    public static DeviceSelection parse(String value, Integer nprocPerNode, boolean plan) {
        if (value == null || value.equalsIgnoreCase("cpu")) {
            return CPU;
        }
        if (plan && value.equalsIgnoreCase("gpu")) {
            return new DeviceSelection(IntStream.range(0, nprocPerNode == null ? 1 : nprocPerNode).boxed().toList());
        }
        if (value.equalsIgnoreCase("gpu")) {
            int visible = visibleGpuCount();
            if (visible == 0) {
                throw new LaunchException("--devices gpu: no GPU found (looked at CUDA_VISIBLE_DEVICES, " + NVIDIA_PROC
                        + " and nvidia-smi -L); use --devices cpu");
            }
            int count = nprocPerNode == null ? visible : nprocPerNode;
            if (count > visible) {
                throw new LaunchException("--nproc_per_node " + count + " with --devices gpu: only " + visible + " GPU(s) visible");
            }
            return new DeviceSelection(IntStream.range(0, count).boxed().toList());
        }
        List<Integer> ids = new ArrayList<>();
        for (String part : value.split(",", -1)) {
            String id = part.trim();
            if (!id.matches("\\d{1,4}")) {
                throw new LaunchException("--devices " + Quoted.of(value) + ": expected cpu, gpu, or GPU ids like 0,1 but found " + Quoted.of(part));
            }
            int parsed = Integer.parseInt(id);
            if (ids.contains(parsed)) {
                throw new LaunchException("--devices " + Quoted.of(value) + ": GPU " + parsed + " is listed twice");
            }
            ids.add(parsed);
        }
        if (nprocPerNode != null && nprocPerNode != ids.size()) {
            throw new LaunchException("--nproc_per_node " + nprocPerNode + " disagrees with --devices " + value
                    + " (one rank per listed device: " + ids.size() + "); leave out --nproc_per_node");
        }
        if (plan) {
            return new DeviceSelection(ids);
        }
        int visible = visibleGpuCount();
        if (visible == 0) {
            throw new LaunchException("--devices " + value + ": no GPU found (looked at CUDA_VISIBLE_DEVICES, " + NVIDIA_PROC
                    + " and nvidia-smi -L); to run on the CPU, leave out --devices and give the number of ranks: --nproc_per_node "
                    + ids.size());
        }
        for (int id : ids) {
            if (id >= visible) {
                throw new LaunchException("--devices " + value + ": GPU " + id + " is not visible here; this machine shows " + visible
                        + " GPU(s)" + (visible > 0 ? " (0.." + (visible - 1) + ")" : ""));
            }
        }
        return new DeviceSelection(ids);
    }

    /** GPUs this process may use: CUDA_VISIBLE_DEVICES when set, else the driver's list, else nvidia-smi's. */
    private static int visibleGpuCount() {
        int known = knownGpuCount();
        return known >= 0 ? known : nvidiaSmiCount();
    }

    /** The GPU count when it can be read without starting a program: from CUDA_VISIBLE_DEVICES or the driver's /proc entries; -1 when neither says. */
    private static int knownGpuCount() {
        String visible = System.getenv("CUDA_VISIBLE_DEVICES");
        if (visible != null) {
            return visible.isBlank() ? 0 : visible.split(",").length;
        }
        if (Files.isDirectory(NVIDIA_PROC)) {
            try (Stream<Path> gpus = Files.list(NVIDIA_PROC)) {
                return (int) gpus.count();
            } catch (IOException e) {
                return -1;
            }
        }
        return -1;
    }

    private static int nvidiaSmiCount() {
        try {
            Process smi = new ProcessBuilder("nvidia-smi", "-L").redirectErrorStream(true).start();
            if (!smi.waitFor(10, TimeUnit.SECONDS)) {
                smi.destroyForcibly();
                throw new LaunchException("--devices: nvidia-smi -L did not answer within 10 s; set CUDA_VISIBLE_DEVICES to the GPUs this job may use");
            }
            String out = new String(smi.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return smi.exitValue() != 0 ? 0 : (int) out.lines().filter(line -> line.startsWith("GPU ")).count();
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }
}
