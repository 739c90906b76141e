package org.fleet4j.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.fleet4j.cluster.Role;
import org.fleet4j.fleet.metrics.RankMetric;

/**
 * What the launcher's {@code /metrics} shows, in Prometheus's text format: of each process this node started, whether
 * it runs and how it ended ({@code fleet_rank_up}, {@code fleet_rank_exit_code}, and {@code fleet_server_*} for the
 * parameter servers), and of each rank the figures it reported ({@link RankMetric}) in its metrics file, read anew at
 * every scrape. A file that is missing (a rank that reports nothing, or not yet), too large or not of the expected
 * form shows nothing of that rank but its state.
 */
final class JobMetrics {
    /** A rank's file holds a line per figure; anything larger is not one. */
    private static final long MAX_FILE_BYTES = 64 << 10;

    /** A process of the job as a scrape finds it; {@code exitCode} is meaningless while it runs. */
    record ProcessState(Role.Kind kind, int index, boolean alive, int exitCode) {
        static ProcessState of(RankProcess p) {
            boolean alive = p.process().isAlive();
            return new ProcessState(p.spec().kind(), p.spec().index(), alive, alive ? 0 : p.process().exitValue());
        }
    }

    private final IntFunction<Path> rankFiles;
    private final Supplier<List<ProcessState>> processes;

    /**
     * @param rankFiles the metrics file of each global rank
     * @param processes the processes started so far
     */
    JobMetrics(IntFunction<Path> rankFiles, Supplier<List<ProcessState>> processes) {
        this.rankFiles = rankFiles;
        this.processes = processes;
    }

    /** For {@code job}: its ranks' files from an earlier job in the same log folder are removed first. */
    static JobMetrics of(LaunchPlan plan, Job job) throws IOException {
        for (RankSpec rank : plan.ranks()) {
            Files.deleteIfExists(plan.metricsFile(rank.index()));
        }
        return new JobMetrics(plan::metricsFile, () -> job.started().stream().map(ProcessState::of).toList());
    }

    String render() {
        StringBuilder text = new StringBuilder();
        List<ProcessState> all = processes.get();
        for (Role.Kind kind : List.of(Role.Kind.TRAINER, Role.Kind.PSERVER)) {
            String what = kind == Role.Kind.TRAINER ? "rank" : "server";
            List<ProcessState> ofKind = all.stream().filter(p -> p.kind() == kind)
                    .sorted(Comparator.comparingInt(ProcessState::index)).toList();
            if (ofKind.isEmpty()) {
                continue;
            }
            family(text, "fleet_" + what + "_up", "gauge", "1 while the " + what + "'s process runs, 0 once it has ended.");
            ofKind.forEach(p -> sample(text, "fleet_" + what + "_up", what, p.index(), p.alive() ? 1 : 0));
            List<ProcessState> ended = ofKind.stream().filter(p -> !p.alive()).toList();
            if (!ended.isEmpty()) {
                family(text, "fleet_" + what + "_exit_code", "gauge", "The exit code of a " + what
                        + " that has ended (128 + the signal for one killed by a signal); fleetrun does not restart it.");
                ended.forEach(p -> sample(text, "fleet_" + what + "_exit_code", what, p.index(), p.exitCode()));
            }
        }
        Map<RankMetric, Map<Integer, Double>> reported = new EnumMap<>(RankMetric.class);
        for (ProcessState p : all) {
            if (p.kind() == Role.Kind.TRAINER) {
                read(rankFiles.apply(p.index()))
                        .forEach((m, v) -> reported.computeIfAbsent(m, k -> new TreeMap<>()).put(p.index(), v));
            }
        }
        reported.forEach((metric, byRank) -> {
            family(text, metric.exposedName(), metric.type(), metric.help());
            byRank.forEach((rank, value) -> sample(text, metric.exposedName(), "rank", rank, value));
        });
        return text.toString();
    }

    /** The figures of a rank's file; none when it is missing or not one. */
    static Map<RankMetric, Double> read(Path file) {
        Map<RankMetric, Double> values = new EnumMap<>(RankMetric.class);
        List<String> lines;
        try {
            if (!Files.isRegularFile(file) || Files.size(file) > MAX_FILE_BYTES) {
                return values;
            }
            lines = Files.readAllLines(file);
        } catch (IOException | RuntimeException e) {
            return values; // gone between the check and the read, or not text: as if missing
        }
        for (String line : lines) {
            String[] parts = line.split(" ");
            RankMetric metric = parts.length == 2 ? RankMetric.byName(parts[0]) : null;
            if (metric != null) {
                try {
                    values.put(metric, Double.parseDouble(parts[1]));
                } catch (NumberFormatException notANumber) {
                    // left out, as any line not of the form
                }
            }
        }
        return values;
    }

    private static void family(StringBuilder text, String name, String type, String help) {
        text.append("# HELP ").append(name).append(' ').append(help).append('\n');
        text.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private static void sample(StringBuilder text, String name, String label, int index, double value) {
        text.append(name).append('{').append(label).append("=\"").append(index).append("\"} ").append(number(value)).append('\n');
    }

    /** A value as Prometheus's text format writes it: integers without a fraction, NaN, +Inf and -Inf spelled so. */
    static String number(double v) {
        if (Double.isNaN(v)) {
            return "NaN";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "+Inf" : "-Inf";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return String.valueOf(v).toLowerCase(Locale.ROOT);
    }

    /** The metric names this renders, for the docs' test. */
    static List<String> names() {
        List<String> names = new ArrayList<>(List.of("fleet_rank_up", "fleet_rank_exit_code", "fleet_server_up",
                "fleet_server_exit_code"));
        for (RankMetric m : RankMetric.values()) {
            names.add(m.exposedName());
        }
        return names;
    }
}
