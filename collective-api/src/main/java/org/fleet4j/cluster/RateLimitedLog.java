package org.fleet4j.cluster;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Warnings that a stranger can provoke at will (a flood of rejected connections) without flooding the console: in
 * each interval the first {@code burst} are written, the rest only counted, and the count is written with the first
 * warning of a later interval. Thread-safe.
 */
public final class RateLimitedLog {
    private final System.Logger log;
    private final int burst;
    private final long intervalNanos;
    private final LongSupplier nanoClock;
    private long windowStart;
    private int written;
    private long suppressed;
    private boolean started;

    public RateLimitedLog(System.Logger log, int burst, long interval, TimeUnit unit) {
        this(log, burst, unit.toNanos(interval), System::nanoTime);
    }

    RateLimitedLog(System.Logger log, int burst, long intervalNanos, LongSupplier nanoClock) {
        if (burst < 1 || intervalNanos <= 0) {
            throw new IllegalArgumentException("a rate-limited log needs burst >= 1 and a positive interval, got "
                    + burst + " per " + intervalNanos + " ns");
        }
        this.log = log;
        this.burst = burst;
        this.intervalNanos = intervalNanos;
        this.nanoClock = nanoClock;
    }

    public void warn(String message) {
        String summary = null;
        synchronized (this) {
            long now = nanoClock.getAsLong();
            if (!started || now - windowStart >= intervalNanos) {
                if (suppressed > 0) {
                    summary = suppressed + " more warning(s) like the above were not shown in the last "
                            + TimeUnit.NANOSECONDS.toSeconds(now - windowStart) + " s";
                }
                started = true;
                windowStart = now;
                written = 0;
                suppressed = 0;
            }
            if (written == burst) {
                suppressed++;
                return;
            }
            written++;
        }
        if (summary != null) {
            log.log(System.Logger.Level.WARNING, summary);
        }
        log.log(System.Logger.Level.WARNING, message);
    }
}
