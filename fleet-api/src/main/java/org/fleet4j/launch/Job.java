package org.fleet4j.launch;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.Role;
import org.fleet4j.launch.RankSpec.ExitPolicy;

/**
 * Runs this node's processes of a launch plan until every rank (trainer) has finished, then stops the parameter
 * servers, which serve until stopped; a failing process of either kind, or a server that ends while ranks still run
 * (with code 0: ranks still running {@link #CLEAN_SERVER_EXIT_GRACE} later, as the workers stop the servers just before
 * they finish), stops the rest and fails the job. No process of the job outlives it: every process and every process it started is
 * terminated on failure, on SIGTERM/SIGINT to the launcher (a shutdown hook), and at the end; when the launcher is
 * killed outright, each process's {@link LauncherWatch} stops it.
 */
public final class Job {
    /**
     * After a process of a parameter-server job failed, how long the workers get to end on their own before they are
     * terminated: a worker whose server died fails its next call at once naming the server's endpoint, and that line
     * should reach its log instead of being cut off by SIGTERM (a server stopped while workers wait in a barrier
     * names the workers that did not come). This, the TERM grace and the KILL wait stay under the 10 s users are
     * promised.
     */
    private static final Duration OWN_EXIT_GRACE = Duration.ofSeconds(2);
    private static final Duration TERM_GRACE = Duration.ofSeconds(4);
    private static final Duration KILL_WAIT = Duration.ofSeconds(3);
    private static final Duration ECHO_DRAIN = Duration.ofSeconds(5);
    private static final int TAIL_LINES = 20;
    /** Longer than the shutdown hook's teardown takes, so the JVM's own exit comes first. */
    private static final Duration SIGNAL_EXIT_WAIT = TERM_GRACE.plus(KILL_WAIT).multipliedBy(2);
    /** How often the launcher notes the processes its ranks started, so orphans of a dead rank are still found. */
    private static final long TRACK_MILLIS = 500;
    /**
     * How long the ranks may still run after a server ended with code 0: the workers stop the servers as their last
     * call (Fleet.stopWorker), so a server's clean exit and the ranks' own are a moment apart; longer means the
     * server ended early, and the job fails naming it.
     */
    private static final Duration CLEAN_SERVER_EXIT_GRACE = Duration.ofSeconds(5);

    private final LaunchPlan plan;
    private final PrintStream console;
    private final PrintStream messages;
    /** A copy-on-write list: the metrics endpoint reads it without the job's lock, which a teardown holds for seconds. */
    private final List<RankProcess> processes = new CopyOnWriteArrayList<>();
    private final Set<ProcessHandle> seenDescendants = new LinkedHashSet<>();
    private final StoppedProcessWatch stopped;
    private boolean stopping;
    private boolean signalled;

    /**
     * @param console where rank 0's output is echoed
     * @param messages where the launcher's own messages go
     * @param peerTimeout how long the processes wait for each other (FLEET_TIMEOUT), for what the launcher says of a
     *                    stopped one
     */
    public Job(LaunchPlan plan, PrintStream console, PrintStream messages, Duration peerTimeout) {
        this.plan = plan;
        this.console = console;
        this.messages = messages;
        this.stopped = new StoppedProcessWatch(peerTimeout, message -> messages.println("fleetrun: " + message));
    }

    /**
     * Runs the job and returns the launcher's exit code ({@link ExitCodes}): 0; or the failed process's own code, but
     * 3 for one killed by a signal and for a server that ended while ranks still ran.
     */
    public int run() throws IOException {
        try {
            Files.createDirectories(plan.logDir());
            Files.writeString(plan.logDir().resolve("endpoints.log"), plan.endpointsReport());
        } catch (IOException e) {
            throw new IOException("cannot write the logs to --log_dir " + plan.logDir() + ": " + e.getMessage(), e);
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
        List<RankSpec> specs = plan.processes();
        int servers = plan.serverProcesses().size();
        info("job " + plan.jobId() + ": starting " + plan.ranks().size() + " rank(s) of " + plan.layout().worldSize()
                + (servers > 0 ? " and " + servers + " parameter server(s) of " + plan.servers().endpoints().size() : "")
                + ", master " + plan.layout().master() + ", logs in " + plan.logDir()
                + (plan.layout().nodeRank() == 0 ? ", echoing rank 0" : ""));
        if (plan.cpus().bound() || plan.logLevel().shows(LogLevel.DEBUG)) {
            info(plan.cpus().note());
        }
        for (RankSpec spec : specs) {
            if (plan.logLevel().shows(LogLevel.DEBUG)) {
                messages.println("fleetrun: " + spec.name() + ": " + spec.printableEnvironment() + " " + String.join(" ", spec.command()));
            }
            RankProcess rank;
            synchronized (this) {
                if (stopping) {
                    return;
                }
                try {
                    rank = RankProcess.start(spec, echoed(spec) ? console : null);
                } catch (IOException e) {
                    throw new IOException("cannot start " + spec.name() + " with " + spec.command().get(0) + ": " + e.getMessage(), e);
                }
                processes.add(rank);
            }
            rank.process().onExit().thenRun(() -> exited.add(rank));
        }
    }

    /** The processes started so far, servers first, in the order they started. */
    List<RankProcess> started() {
        return List.copyOf(processes);
    }

    private static boolean echoed(RankSpec spec) {
        return spec.kind() == Role.Kind.TRAINER && spec.index() == 0;
    }

    private int superviseUntilDone(BlockingQueue<RankProcess> exited) {
        int finishing = (int) processes.stream().filter(r -> r.spec().exitPolicy() == ExitPolicy.FINISHES).count();
        int serving = processes.size() - finishing;
        RankProcess cleanServerExit = null;
        long cleanServerExitNanos = 0;
        // a pod that holds only a parameter server lasts as long as its server, whose exit 0 is the trainers' stop
        boolean serversOnly = plan.ranks().isEmpty();
        while (finishing > 0 || serversOnly && serving > 0) {
            RankProcess rank;
            try {
                rank = exited.poll(TRACK_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stopAll();
                return ExitCodes.SIGTERM;
            }
            if (cleanServerExit != null && System.nanoTime() - cleanServerExitNanos > CLEAN_SERVER_EXIT_GRACE.toNanos()
                    && startFailureTeardown()) {
                return reportFailure(cleanServerExit, ExitStatus.launcherCode(0), ExitStatus.describe(0) + " while " + finishing
                        + " rank(s) still ran");
            }
            if (rank == null) {
                trackDescendants();
                checkStopped();
                continue;
            }
            int code = rank.process().exitValue();
            if (rank.spec().exitPolicy() == ExitPolicy.FINISHES) {
                finishing--;
                if (code != 0 && startFailureTeardown()) {
                    return reportFailure(rank, ExitStatus.launcherCode(code), ExitStatus.describe(code));
                }
            } else {
                serving--;
                if (code == 0 && serversOnly) {
                    continue;
                }
                if (code == 0) {
                    if (cleanServerExit == null) {
                        cleanServerExit = rank;
                        cleanServerExitNanos = System.nanoTime();
                    }
                } else if (startFailureTeardown()) {
                    String why = ExitStatus.describe(code) + " while " + finishing + " rank(s) still ran";
                    return reportFailure(rank, ExitStatus.launcherCode(code), why);
                }
            }
        }
        processes.forEach(process -> process.awaitOutput(ECHO_DRAIN));
        stopAll();
        boolean bySignal;
        synchronized (this) {
            bySignal = signalled;
        }
        if (bySignal) {
            return awaitSignalExit();
        }
        info("job " + plan.jobId() + ": " + (serversOnly ? "this node's " + plan.serverProcesses().size()
                + " parameter server(s) finished" : "all " + plan.ranks().size() + " rank(s) finished")
                + (serving > 0 ? "; stopped " + serving + " parameter server(s)" : ""));
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
        return ExitCodes.SIGTERM;
    }

    /** True when this failure is the one that stops the job (not a rank going down during a stop). */
    private synchronized boolean startFailureTeardown() {
        if (stopping) {
            return false;
        }
        stopping = true;
        return true;
    }

    private int reportFailure(RankProcess rank, int code, String why) {
        RankSpec spec = rank.spec();
        messages.println("fleetrun: " + spec.name() + " (pid " + rank.process().pid() + ") " + why + "; stopping the other "
                + running());
        if (!plan.serverProcesses().isEmpty()) {
            awaitWorkersOwnExit();
        }
        terminateEverything();
        rank.awaitOutput(ECHO_DRAIN);
        messages.println("fleetrun: last " + TAIL_LINES + " lines of " + spec.logFile() + ":");
        LogTail.lastLines(spec.logFile(), TAIL_LINES).forEach(line -> messages.println("    " + line));
        messages.println("fleetrun: job " + plan.jobId() + " failed: " + spec.name() + " " + why);
        return code;
    }

    /** Waits up to {@link #OWN_EXIT_GRACE} for every rank (worker) still running to end by itself. */
    private void awaitWorkersOwnExit() {
        List<RankProcess> workers;
        synchronized (this) {
            workers = processes.stream().filter(p -> p.spec().kind() == Role.Kind.TRAINER).toList();
        }
        long until = System.nanoTime() + OWN_EXIT_GRACE.toNanos();
        try {
            for (RankProcess w : workers) {
                long left = until - System.nanoTime();
                if (left <= 0 || !w.process().waitFor(left, TimeUnit.NANOSECONDS)) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void stopOnSignal() {
        boolean first;
        boolean anyAlive;
        synchronized (this) {
            first = !stopping;
            stopping = true;
            signalled = true;
            anyAlive = processes.stream().anyMatch(p -> p.process().isAlive());
        }
        if (first && anyAlive) {
            messages.println("fleetrun: stopping job " + plan.jobId() + ": terminating " + running());
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
        processes.forEach(process -> targets.add(process.process().toHandle()));
        targets.addAll(seenDescendants);
        List<ProcessHandle> survivors = ProcessTrees.terminate(targets, TERM_GRACE, KILL_WAIT);
        if (!survivors.isEmpty()) {
            messages.println("fleetrun: could not stop process(es) " + survivors.stream().map(ProcessHandle::pid).toList()
                    + " within " + (TERM_GRACE.plus(KILL_WAIT).toSeconds()) + " s even with SIGKILL");
        }
    }

    private void checkStopped() {
        List<RankProcess> all;
        synchronized (this) {
            all = List.copyOf(processes);
        }
        stopped.check(all, System.nanoTime());
    }

    private synchronized void trackDescendants() {
        seenDescendants.removeIf(process -> !process.isAlive());
        ProcessHandle.current().descendants().forEach(seenDescendants::add);
    }

    /** "2 running rank(s)", and the parameter servers when there are any. */
    private synchronized String running() {
        long ranks = processes.stream().filter(p -> p.process().isAlive() && p.spec().kind() == Role.Kind.TRAINER).count();
        long servers = processes.stream().filter(p -> p.process().isAlive() && p.spec().kind() == Role.Kind.PSERVER).count();
        return ranks + " running rank(s)" + (servers > 0 ? " and " + servers + " parameter server(s)" : "");
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
