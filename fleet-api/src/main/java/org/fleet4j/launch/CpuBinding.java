package org.fleet4j.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.fleet4j.text.Quoted;

/**
 * {@code --cpu_bind}: which CPUs each rank of this node may run on. Bound ranks get disjoint slices of the CPUs the
 * launcher may use (rank k of N: the k-th of N equal slices), so the scheduler never moves a rank's compute thread
 * to the other rank's core and back (cold caches, and a rank that waits for a core stalls every rank of a synchronous
 * job). Binding wraps each rank's JVM in {@code taskset -c LIST}, so every thread of the JVM, from its first, is bound.
 *
 * @param slices the CPU list of each local rank ("0", "2-3"), or empty when ranks are not bound
 * @param note   one line for the launcher's start message: what was bound, or why not
 */
public record CpuBinding(List<String> slices, Path taskset, String note) {
    /** The values of {@code --cpu_bind}. */
    public enum Mode {
        /** Bind CPU jobs of 2 or more ranks that fit one rank per CPU, where taskset works; otherwise leave them free. */
        AUTO,
        /** Never bind. */
        NONE,
        /** Always bind, and fail when that cannot be done. */
        CORES;

        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public CpuBinding {
        slices = List.copyOf(slices);
    }

    static CpuBinding none(String note) {
        return new CpuBinding(List.of(), null, note);
    }

    public boolean bound() {
        return !slices.isEmpty();
    }

    /** The command prefix that binds local rank {@code localRank}: none, or taskset -c LIST. */
    List<String> prefix(int localRank) {
        return bound() ? List.of(taskset.toString(), "-c", slices.get(localRank)) : List.of();
    }

    /** Decides the binding of {@code nprocPerNode} ranks on this machine. */
    static CpuBinding plan(Mode mode, DeviceSelection devices, int nprocPerNode) {
        if (mode == Mode.NONE) {
            return none("not bound to CPUs (--cpu_bind none)");
        }
        if (mode == Mode.AUTO && devices.isGpu()) {
            return none("not bound to CPUs (GPU ranks; --cpu_bind cores binds them)");
        }
        if (mode == Mode.AUTO && nprocPerNode < 2) {
            return none("not bound to CPUs (one rank)");
        }
        return plan(mode, nprocPerNode, allowedCpus(), findOnPath("taskset"));
    }

    static CpuBinding plan(Mode mode, int nprocPerNode, List<Integer> cpus, Optional<Path> taskset) {
        boolean required = mode == Mode.CORES;
        if (taskset.isEmpty()) {
            return refuse(required, "no taskset on PATH (Debian's util-linux provides it)");
        }
        if (nprocPerNode > cpus.size()) {
            return refuse(required, nprocPerNode + " ranks on " + cpus.size() + " CPU(s) " + list(cpus)
                    + ": binding needs at least one CPU per rank");
        }
        List<String> slices = new ArrayList<>();
        for (int k = 0; k < nprocPerNode; k++) {
            slices.add(list(cpus.subList(k * cpus.size() / nprocPerNode, (k + 1) * cpus.size() / nprocPerNode)));
        }
        String failure = tryBinding(taskset.get(), slices.getFirst());
        if (failure != null) {
            return refuse(required, failure);
        }
        return new CpuBinding(slices, taskset.get(), "ranks bound to CPUs " + String.join(" | ", slices)
                + " (--cpu_bind " + mode.value() + ")");
    }

    private static CpuBinding refuse(boolean required, String why) {
        if (required) {
            throw new LaunchException("--cpu_bind cores: cannot bind the ranks to CPUs: " + why);
        }
        return none("not bound to CPUs (" + why + ")");
    }

    /** Runs taskset once, so that a machine that forbids affinity changes fails here and not in every rank. */
    private static String tryBinding(Path taskset, String cpus) {
        try {
            Process p = new ProcessBuilder(taskset.toString(), "-c", cpus, "true").redirectErrorStream(true).start();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return taskset + " -c " + cpus + " true did not finish within 10 s";
            }
            String output = new String(p.getInputStream().readAllBytes()).strip();
            return p.exitValue() == 0 ? null : taskset + " -c " + cpus + " failed (exit " + p.exitValue() + "): " + output;
        } catch (IOException e) {
            return "cannot run " + taskset + ": " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while trying " + taskset;
        }
    }

    /** The CPUs this process may run on: Cpus_allowed_list of /proc/self/status, else 0..availableProcessors-1. */
    static List<Integer> allowedCpus() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return parseList(line.substring(line.indexOf(':') + 1));
                }
            }
        } catch (IOException | IllegalArgumentException e) {
            // not Linux, or an unexpected format: fall through
        }
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            all.add(i);
        }
        return all;
    }

    /** "0-3,8,10-11" -> [0, 1, 2, 3, 8, 10, 11]. */
    static List<Integer> parseList(String text) {
        TreeSet<Integer> cpus = new TreeSet<>();
        for (String part : text.strip().split(",")) {
            String p = part.strip();
            if (p.isEmpty()) {
                continue;
            }
            try {
                int dash = p.indexOf('-');
                int from = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
                int to = dash < 0 ? from : Integer.parseInt(p.substring(dash + 1));
                if (from < 0 || to < from) {
                    throw new IllegalArgumentException("CPU range " + Quoted.of(p) + " in " + Quoted.of(text.strip()));
                }
                for (int c = from; c <= to; c++) {
                    cpus.add(c);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("CPU list " + Quoted.of(text.strip()) + ": " + Quoted.of(p) + " is not a number or range");
            }
        }
        return List.copyOf(cpus);
    }

    /** [0, 1, 2, 5] -> "0-2,5". */
    static String list(List<Integer> cpus) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < cpus.size(); ) {
            int j = i;
            while (j + 1 < cpus.size() && cpus.get(j + 1) == cpus.get(j) + 1) {
                j++;
            }
            if (!out.isEmpty()) {
                out.append(',');
            }
            out.append(cpus.get(i));
            if (j > i) {
                out.append('-').append(cpus.get(j));
            }
            i = j + 1;
        }
        return out.toString();
    }

    private static Optional<Path> findOnPath(String name) {
        String path = System.getenv("PATH");
        List<String> dirs = new ArrayList<>(path == null ? List.of() : List.of(path.split(java.io.File.pathSeparator)));
        dirs.addAll(List.of("/usr/bin", "/bin"));
        for (String dir : dirs) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
