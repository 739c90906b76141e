package org.fleet4j.launch;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Runs this node's ranks of a launch plan until all finish, or one fails and the rest are stopped.
 * No process of the job outlives it: every rank and every process a rank started is terminated on
 * failure, on SIGTERM/SIGINT to the launcher (a shutdown hook), and at the end; when the launcher is
 * killed outright, each rank's {@link LauncherWatch} stops it.
 */
public final class Job {
    /** TERM grace plus KILL wait stay under the 10 s users are promised. */
    private static final Duration TERM_GRACE = Duration.ofSeconds(5);
    private static final Duration KILL_WAIT = Duration.ofSeconds(3);
    private static final Duration ECHO_DRAIN = Duration.ofSeconds(5);
    private static final int TAIL_LINES = 20;
    private static final int SIGTERM_EXIT = 128 + 15;
    /** Longer than the shutdown hook's teardown takes, so the JVM's own exit comes first. */
    private static final Duration SIGNAL_EXIT_WAIT = TERM_GRACE.plus(KILL_WAIT).multipliedBy(2);
    /** How often the launcher notes the processes its ranks started, so orphans of a dead rank are still found. */
    private static final long TRACK_MILLIS = 500;

    private final LaunchPlan plan;
    private final PrintStream console;
    private final PrintStream messages;
    private final List<RankProcess> ranks = new ArrayList<>();
    private final Set<ProcessHandle> seenDescendants = new LinkedHashSet<>();
    private boolean stopping;
    private boolean signalled;

    /**
     * @param console where rank 0's output is echoed
     * @param messages where the launcher's own messages go
     */
    public Job(LaunchPlan plan, PrintStream console, PrintStream messages) {
        this.plan = plan;
        this.console = console;
        this.messages = messages;
    }

    /** Runs the job and returns the launcher's exit code: 0, or the failed rank's code. */
    public int run() throws IOException {
        try {
            Files.createDirectories(plan.logDir());
            Files.writeString(plan.logDir().resolve("endpoints.log"), plan.endpointsReport());
        } catch (IOException e) {
            throw new IOException("cannot write the logs to --log_dir " + plan.logDir() + ": " + e, e);
        }
        Thread hook = new Thread(this::stopOnSignal, "fleetrun-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        BlockingQueue<RankProcess> exited = new LinkedBlockingQueue<>();
        try {
            startAll(exited);
            int code = superviseUntilDone(exited);
            removeHook(hook);
            return code;
        } catch (IOException | RuntimeException e) {
            stopAll();
            removeHook(hook);
            throw e;
        }
    }

    private void startAll(BlockingQueue<RankProcess> exited) throws IOException {
        List<RankSpec> specs = plan.ranks();
        info("job " + plan.jobId() + ": starting " + specs.size() + " rank(s) of " + plan.layout().worldSize() + ", master "
                + plan.layout().master() + ", logs in " + plan.logDir() + (plan.layout().nodeRank() == 0 ? ", echoing rank 0" : ""));
        if (plan.cpus().bound() || plan.logLevel().shows(LogLevel.DEBUG)) {
            info(plan.cpus().note());
        }
        for (RankSpec spec : specs) {
            if (plan.logLevel().shows(LogLevel.DEBUG)) {
                messages.println("fleetrun: rank " + spec.globalRank() + ": " + spec.printableEnvironment() + " " + String.join(" ", spec.command()));
            }
            RankProcess rank;
            synchronized (this) {
                if (stopping) {
                    return;
                }
                try {
                    rank = RankProcess.start(spec, spec.globalRank() == 0 ? console : null);
                } catch (IOException e) {
                    throw new IOException("cannot start rank " + spec.globalRank() + " with " + spec.command().get(0) + ": " + e.getMessage(), e);
                }
                ranks.add(rank);
            }
            rank.process().onExit().thenRun(() -> exited.add(rank));
        }
    }

    private int superviseUntilDone(BlockingQueue<RankProcess> exited) {
        int running = ranks.size();
        while (running > 0) {
            RankProcess rank;
            try {
                rank = exited.poll(TRACK_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stopAll();
                return SIGTERM_EXIT;
            }
            if (rank == null) {
                trackDescendants();
                continue;
            }
            running--;
            int code = rank.process().exitValue();
            if (code != 0 && startFailureTeardown()) {
                return reportFailure(rank, code, running);
            }
        }
        ranks.forEach(rank -> rank.awaitOutput(ECHO_DRAIN));
        stopAll();
        boolean bySignal;
        synchronized (this) {
            bySignal = signalled;
        }
        if (bySignal) {
            return awaitSignalExit();
        }
        info("job " + plan.jobId() + ": all " + ranks.size() + " rank(s) finished");
        return 0;
    }

    /**
     * A signal started the JVM's shutdown, and the JVM exits with 128 + its number once the hook has stopped the job:
     * 130 for SIGINT (Ctrl-C), 143 for SIGTERM. Returning a code of our own would race that exit with a wrong number.
     */
    private static int awaitSignalExit() {
        try {
            Thread.sleep(SIGNAL_EXIT_WAIT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return SIGTERM_EXIT;
    }

    /** True when this failure is the one that stops the job (not a rank going down during a stop). */
    private synchronized boolean startFailureTeardown() {
        if (stopping) {
            return false;
        }
        stopping = true;
        return true;
    }

    private int reportFailure(RankProcess rank, int code, int stillRunning) {
        RankSpec spec = rank.spec();
        messages.println("fleetrun: rank " + spec.globalRank() + " (pid " + rank.process().pid() + ") " + ExitStatus.describe(code)
                + "; stopping the other " + stillRunning + " running rank(s)");
        terminateEverything();
        rank.awaitOutput(ECHO_DRAIN);
        messages.println("fleetrun: last " + TAIL_LINES + " lines of " + spec.logFile() + ":");
        LogTail.lastLines(spec.logFile(), TAIL_LINES).forEach(line -> messages.println("    " + line));
        messages.println("fleetrun: job " + plan.jobId() + " failed: rank " + spec.globalRank() + " " + ExitStatus.describe(code));
        return code;
    }

    private void stopOnSignal() {
        boolean first;
        long alive;
        synchronized (this) {
            first = !stopping;
            stopping = true;
            signalled = true;
            alive = ranks.stream().filter(r -> r.process().isAlive()).count();
        }
        if (first && alive > 0) {
            messages.println("fleetrun: stopping job " + plan.jobId() + ": terminating " + alive + " running rank(s)");
        }
        terminateEverything();
    }

    private void stopAll() {
        synchronized (this) {
            stopping = true;
        }
        terminateEverything();
    }

    /** TERMs, then KILLs, every rank, every live descendant and every process a rank was seen to start. */
    private synchronized void terminateEverything() {
        trackDescendants();
        Set<ProcessHandle> targets = new LinkedHashSet<>();
        ranks.forEach(rank -> targets.add(rank.process().toHandle()));
        targets.addAll(seenDescendants);
        List<ProcessHandle> survivors = ProcessTrees.terminate(targets, TERM_GRACE, KILL_WAIT);
        if (!survivors.isEmpty()) {
            messages.println("fleetrun: could not stop process(es) " + survivors.stream().map(ProcessHandle::pid).toList()
                    + " within " + (TERM_GRACE.plus(KILL_WAIT).toSeconds()) + " s even with SIGKILL");
        }
    }

    private synchronized void trackDescendants() {
        seenDescendants.removeIf(process -> !process.isAlive());
        ProcessHandle.current().descendants().forEach(seenDescendants::add);
    }

    private void info(String message) {
        if (plan.logLevel().shows(LogLevel.INFO)) {
            messages.println("fleetrun: " + message);
        }
    }

    private static void removeHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is already running and stops the job itself
        }
    }
}
