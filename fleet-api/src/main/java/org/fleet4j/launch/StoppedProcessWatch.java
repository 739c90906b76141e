package org.fleet4j.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Notices processes of the job that a signal has stopped (SIGSTOP, Ctrl-Z, a debugger: state {@code T} or {@code t}
 * in /proc/PID/stat). Such a process makes no progress, and its peers would learn of it only when their wait for it
 * times out; the launcher can see it at once, and says so (once, after {@link #REPORT_AFTER}, and again when the
 * process runs on), without ending the job. Where /proc is missing, nothing is reported.
 */
final class StoppedProcessWatch {
    /** Longer than a debugger's or a job-control stop that is meant to be brief, far shorter than any timeout. */
    static final Duration REPORT_AFTER = Duration.ofSeconds(3);

    private final Duration peerTimeout;
    private final Consumer<String> report;
    private final Map<RankProcess, Long> stoppedSince = new HashMap<>();
    private final Set<RankProcess> reported = new HashSet<>();

    /** {@code peerTimeout} is how long the other processes wait for a stopped one (FLEET_TIMEOUT). */
    StoppedProcessWatch(Duration peerTimeout, Consumer<String> report) {
        this.peerTimeout = peerTimeout;
        this.report = report;
    }

    /** Looks at each live process once; {@code now} from {@link System#nanoTime()}. */
    void check(List<RankProcess> processes, long now) {
        for (RankProcess p : processes) {
            long pid = p.process().pid();
            if (p.process().isAlive() && isStopped(pid)) {
                long since = stoppedSince.computeIfAbsent(p, k -> now);
                if (now - since >= REPORT_AFTER.toNanos() && reported.add(p)) {
                    report.accept(p.spec().name() + " (pid " + pid + ") is stopped by a signal; waiting up to "
                            + peerTimeout.toSeconds() + " s (FLEET_TIMEOUT) for it to run again");
                }
            } else {
                stoppedSince.remove(p);
                if (reported.remove(p) && p.process().isAlive()) {
                    report.accept(p.spec().name() + " (pid " + pid + ") runs again");
                }
            }
        }
    }

    /** The state field of /proc/PID/stat, which follows the command name in parentheses (which may hold anything). */
    static boolean isStopped(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            int end = stat.lastIndexOf(')');
            if (end < 0 || end + 2 >= stat.length()) {
                return false;
            }
            char state = stat.charAt(end + 2);
            return state == 'T' || state == 't';
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
