package org.fleet4j.fleet.metrics;

import java.io.PrintStream;
import java.util.Locale;

/**
 * A per-epoch progress bar with loss and samples/s. On a terminal it redraws one line; into a log file (the
 * launcher's workerlog) it prints a line every tenth of the epoch so logs stay readable.
 */
public final class ProgressBar {
    private static final int WIDTH = 30;

    private final PrintStream out;
    private final boolean interactive;
    private final String label;
    private final int total;
    private final long startNanos = System.nanoTime();
    private int lastDecile = -1;

    public ProgressBar(PrintStream out, boolean interactive, String label, int total) {
        this.out = out;
        this.interactive = interactive;
        this.label = label;
        this.total = Math.max(total, 1);
    }

    /** Whether this JVM writes to a terminal (so the bar can redraw in place). */
    public static boolean consoleIsInteractive() {
        return System.console() != null && System.console().isTerminal();
    }

    public void update(int done, double loss, long samples) {
        double secs = (System.nanoTime() - startNanos) / 1e9;
        double rate = secs > 0 ? samples / secs : 0;
        String line = render(done, loss, rate);
        if (interactive) {
            out.print("\r" + line);
            if (done >= total) {
                out.println();
            }
            out.flush();
        } else {
            int decile = done * 10 / total;
            if (decile != lastDecile || done >= total) {
                lastDecile = decile;
                out.println(line);
            }
        }
    }

    String render(int done, double loss, double rate) {
        int filled = (int) ((long) WIDTH * Math.min(done, total) / total);
        return String.format(Locale.ROOT, "%s [%s%s] %d/%d loss %.4f  %,.0f samples/s", label,
                "=".repeat(filled), " ".repeat(WIDTH - filled), done, total, loss, rate);
    }
}
