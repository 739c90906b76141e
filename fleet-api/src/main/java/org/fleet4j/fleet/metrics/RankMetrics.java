package org.fleet4j.fleet.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.DoubleSupplier;

/**
 * This rank's figures for its launcher's Prometheus endpoint ({@code fleetrun --metrics_port}). The launcher names a
 * file in the rank's environment ({@value #FILE_ENV}); a daemon thread rewrites it (atomically, by rename) once every
 * {@link #WRITE_INTERVAL} when a figure changed, one {@code NAME VALUE} line per figure (names of {@link RankMetric}),
 * and the launcher reads it when it is scraped. So a step only stores numbers; the file is never written on its
 * thread, and a slow disk or a slow scrape cannot hold training up. Without the variable the figures are only kept.
 */
public final class RankMetrics implements AutoCloseable {
    public static final String FILE_ENV = "FLEET_METRICS_FILE";
    public static final Duration WRITE_INTERVAL = Duration.ofSeconds(1);
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

    private final Path file;
    private final double[] values = new double[RankMetric.values().length];
    private final Map<RankMetric, DoubleSupplier> sampled = new EnumMap<>(RankMetric.class);
    private final Thread writer;
    private long changes;
    private long written = -1;
    private boolean closed;
    private boolean failureReported;

    private RankMetrics(Path fileOrNull) {
        Arrays.fill(values, Double.NaN);
        this.file = fileOrNull;
        this.writer = fileOrNull == null ? null
                : Thread.ofPlatform().daemon().name("fleet-rank-metrics").start(this::writePeriodically);
    }

    /** Reports to the file that {@value #FILE_ENV} names in {@code env}, or keeps the figures only when it is not set. */
    public static RankMetrics fromEnvironment(Map<String, String> env) {
        String name = env.get(FILE_ENV);
        return new RankMetrics(name == null || name.isBlank() ? null : Path.of(name));
    }

    /** Whether a launcher reads these figures. */
    public boolean reporting() {
        return file != null;
    }

    public synchronized void set(RankMetric metric, double value) {
        values[metric.ordinal()] = value;
        changes++;
    }

    /** Adds to a figure that starts at 0 (a counter). */
    public synchronized void add(RankMetric metric, double amount) {
        double now = values[metric.ordinal()];
        values[metric.ordinal()] = (Double.isNaN(now) ? 0 : now) + amount;
        changes++;
    }

    /** Reads {@code metric} from {@code source} at every write, for a figure that changes between steps (a queue depth). */
    public synchronized void sample(RankMetric metric, DoubleSupplier source) {
        sampled.put(metric, source);
    }

    /** The figure, or NaN when it was never given. */
    public synchronized double value(RankMetric metric) {
        DoubleSupplier source = sampled.get(metric);
        return source != null ? source.getAsDouble() : values[metric.ordinal()];
    }

    /** The file's text: a line per figure given so far. */
    public synchronized String render() {
        StringBuilder text = new StringBuilder();
        for (RankMetric m : RankMetric.values()) {
            double v = value(m);
            if (!Double.isNaN(v)) {
                text.append(m.exposedName()).append(' ').append(v).append('\n');
            }
        }
        return text.toString();
    }

    /** Stops the writer and writes the last figures, so the launcher shows what the rank ended with. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            notifyAll();
        }
        if (writer == null) {
            return;
        }
        try {
            if (writer.join(CLOSE_WAIT)) {
                write(render());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void writePeriodically() {
        while (true) {
            String text;
            synchronized (this) {
                long until = System.nanoTime() + WRITE_INTERVAL.toNanos();
                for (long left = WRITE_INTERVAL.toNanos(); !closed && left > 0; left = until - System.nanoTime()) {
                    try {
                        wait(Math.max(1, left / 1_000_000));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (closed) {
                    return;
                }
                if (changes == written && sampled.isEmpty()) {
                    continue;
                }
                written = changes;
                text = render();
            }
            write(text);
        }
    }

    private void write(String text) {
        Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.writeString(temporary, text);
            Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            // training goes on; the launcher shows the figures of the last write that worked
            synchronized (this) {
                if (failureReported) {
                    return;
                }
                failureReported = true;
            }
            System.err.println("fleet: cannot write this rank's metrics file " + file + " for the launcher (" + e
                    + "); its /metrics endpoint shows the figures of the last write that worked");
        }
    }
}
