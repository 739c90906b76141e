package org.fleet4j.core.device;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The launcher's device options turned into one device per local rank: {@code --devices cpu} (the default),
 * {@code --devices gpu} (one rank per visible GPU) or {@code --gpus 0,1} (one rank per listed GPU).
 *
 * @param kind     "cpu" or "gpu"
 * @param ordinals the GPU of each local rank; empty for the CPU, or for "every visible GPU" until {@link #resolve}
 */
public record DeviceAssignment(String kind, List<Integer> ordinals) {
    public DeviceAssignment {
        ordinals = List.copyOf(ordinals);
    }

    /** Parses the two options; either may be null when not given. */
    public static DeviceAssignment parse(String devices, String gpus) {
        String kind = devices == null ? (gpus == null ? "cpu" : "gpu") : devices.trim().toLowerCase(Locale.ROOT);
        if (!kind.equals("cpu") && !kind.equals("gpu")) {
            throw new IllegalArgumentException("--devices '" + devices + "': expected cpu or gpu");
        }
        if (gpus == null) {
            return new DeviceAssignment(kind, List.of());
        }
        if (kind.equals("cpu")) {
            throw new IllegalArgumentException("--gpus " + gpus + " contradicts --devices cpu; drop one of them");
        }
        List<Integer> ordinals = new ArrayList<>();
        for (String part : gpus.split(",", -1)) {
            try {
                int o = Integer.parseInt(part.trim());
                if (o < 0) {
                    throw new NumberFormatException();
                }
                if (ordinals.contains(o)) {
                    throw new IllegalArgumentException("--gpus " + gpus + " lists GPU " + o + " twice; each rank needs its own GPU");
                }
                ordinals.add(o);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--gpus '" + gpus + "': '" + part.trim()
                        + "' is not a GPU index; expected a comma-separated list such as 0,1", e);
            }
        }
        return new DeviceAssignment("gpu", ordinals);
    }

    /** Fills in "every visible GPU" and checks that listed GPUs exist. */
    public DeviceAssignment resolve(int visibleGpus) {
        if (kind.equals("cpu")) {
            return this;
        }
        if (visibleGpus == 0) {
            throw new DeviceUnavailableException("--devices gpu asked for, but this machine shows no GPU"
                    + " (check nvidia-smi and CUDA_VISIBLE_DEVICES)");
        }
        if (ordinals.isEmpty()) {
            List<Integer> all = new ArrayList<>();
            for (int i = 0; i < visibleGpus; i++) {
                all.add(i);
            }
            return new DeviceAssignment(kind, all);
        }
        for (int o : ordinals) {
            if (o >= visibleGpus) {
                throw new DeviceUnavailableException("--gpus lists GPU " + o + ", but this machine shows "
                        + visibleGpus + " GPU" + (visibleGpus == 1 ? "" : "s") + " (0.." + (visibleGpus - 1) + ")");
            }
        }
        return this;
    }

    /** How many ranks the launcher starts on this node: one per GPU, or {@code cpuRanks} on the CPU. */
    public int ranksPerNode(int cpuRanks) {
        if (kind.equals("cpu")) {
            return cpuRanks;
        }
        if (ordinals.isEmpty()) {
            throw new IllegalStateException("resolve the GPU list against the visible GPUs first");
        }
        return ordinals.size();
    }

    /** The value of {@link Devices#DEVICE_ENV} for a local rank: "cpu" or "gpu:N". */
    public String deviceOf(int localRank) {
        if (kind.equals("cpu")) {
            return "cpu";
        }
        if (localRank < 0 || localRank >= ordinals.size()) {
            throw new IllegalArgumentException("local rank " + localRank + " has no GPU; GPUs assigned: " + ordinals);
        }
        return "gpu:" + ordinals.get(localRank);
    }
}
