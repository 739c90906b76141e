package org.fleet4j.launch;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.group.BackendChoice;
import org.fleet4j.collective.group.Locality;
import org.fleet4j.compiler.Pipeline;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.strategy.report.StrategyCli;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.text.Quoted;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine;

/**
 * {@code bin/fleetrun}: starts one JVM per rank with its role in the environment, supervises them, and
 * tears the whole job down when one fails. Bad input exits with code 2 and a one-line message; every exit code means
 * what {@link ExitCodes} says.
 */
public final class FleetRun {
    private static final Path MEMINFO = Path.of("/proc/meminfo");

    private FleetRun() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the launcher: parses {@code args}, then starts the job (or the dry run) and waits for it.
     *
     * @param out where rank 0's output and the dry run go
     * @param err where the launcher's own messages go
     * @return the process exit code ({@link ExitCodes}): 0, 2 for bad input, the failed process's code, 3 for a process
     *         killed by a signal
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, out, err, System.getenv());
    }

    /** As {@link #run(String[], PrintStream, PrintStream)}, finding the cluster in {@code env} (tests). */
    static int run(String[] args, PrintStream out, PrintStream err, Map<String, String> env) {
        LaunchOptions options = new LaunchOptions();
        CommandLine cli = new CommandLine(options).setCaseInsensitiveEnumValuesAllowed(true);
        cli.getCommandSpec().usageMessage().footer(footer());
        boolean debug = wantsDebug(args);
        try {
            CommandLineSplit split = CommandLineSplit.of(args, cli.getCommandSpec());
            cli.parseArgs(split.forParser());
            if (cli.isUsageHelpRequested()) {
                cli.usage(out);
                return 0;
            }
            return launch(options, split.programArgs(), out, err, env);
        } catch (ParameterException e) {
            // picocli quotes a bad value whole
            return fail(err, Quoted.message(e.getMessage().replace(System.lineSeparator(), "; ").strip())
                    + " (see bin/fleetrun --help)", e, debug, ExitCodes.BAD_INPUT);
        } catch (LaunchException e) {
            return fail(err, e.getMessage(), e, debug, ExitCodes.BAD_INPUT);
        } catch (IOException e) {
            return fail(err, e.getMessage(), e, debug, ExitCodes.INTERNAL_ERROR);
        } catch (UncheckedIOException e) {
            return fail(err, e.getMessage() + ": " + e.getCause().getMessage(), e, debug, ExitCodes.INTERNAL_ERROR);
        }
    }

    private static int launch(LaunchOptions options, List<String> programArgs, PrintStream out, PrintStream err,
                              Map<String, String> env) throws IOException {
        Path strategy = options.strategy == null ? null : existingFile(options.strategy, "--strategy");
        if (options.nprocPerNode != null && options.nprocPerNode < 1) {
            throw new LaunchException("--nproc_per_node " + options.nprocPerNode + ": expected at least 1");
        }
        ParameterServerFlags ps = ParameterServerFlags.of(options);
        DetectedCluster cluster = DetectedCluster.find(options, env);
        if (cluster != null) {
            cluster.checkOneHostServers(options.serverNum);
        }
        Integer perNode = cluster == null ? options.nprocPerNode : cluster.nprocPerNode(options.nprocPerNode);
        Integer trainers = ps == null ? perNode : Integer.valueOf(ps.workers());
        DeviceSelection devices = DeviceSelection.parse(options.devices, trainers, options.dryRun);
        int nprocPerNode = devices.isGpu() ? devices.gpuIds().size() : trainers == null ? 1 : trainers;
        if (options.dryRun) {
            int nnodes = options.ips != null ? options.ips.size() : options.nnodes != null ? options.nnodes : 1;
            if (nnodes < 1) {
                throw new LaunchException("--nnodes " + nnodes + ": expected at least 1");
            }
            String format = options.format.name().toLowerCase(Locale.ROOT);
            if (options.program != null && !format.equals("table")) {
                throw new LaunchException("--dry_run --format " + format + " describes the strategy only; leave out PROGRAM ("
                        + options.program + "), or use the table format to see what the compiler does to it");
            }
            if (cluster != null) {
                ClusterLayout layout = cluster.layout(options.master, options.startPort, nprocPerNode, false);
                nnodes = layout.nnodes();
                nprocPerNode = layout.nprocPerNode();
                if (format.equals("table")) {
                    out.println(cluster.describe(layout));
                }
            } else if (format.equals("table")) {
                out.println(DetectedCluster.describeFlags(options, nnodes));
            }
            LaunchPlan plan = options.program == null ? null
                    : plan(options, cluster, programArgs, strategy, devices, nprocPerNode, err, env);
            int status = StrategyCli.dryRun(strategy, nnodes, nprocPerNode, devices.kind(), format, out, err);
            if (status != 0 || !format.equals("table")) {
                return status;
            }
            if (plan == null) {
                out.println(compilerPipeline(strategy, new World(nnodes, nprocPerNode, devices.kind())));
                out.println(collectiveBackend(nnodes, nprocPerNode));
                return 0;
            }
            out.flush();
            try (LogDirLock held = LogDirLock.acquire(plan.logDir(), plan.jobId())) {
                return DryRunProgram.run(plan, out);
            }
        }
        if (options.program == null) {
            throw new LaunchException("missing PROGRAM: name a built-in (" + String.join(", ", NamedPrograms.all().keySet())
                    + "), a main class, or a jar (see bin/fleetrun --help)");
        }
        if (options.jobId.isBlank()) {
            throw new LaunchException("--job_id: expected a non-empty name");
        }
        if (!devices.isGpu() && !options.skipMemoryCheck) {
            RankMemory.check(nprocPerNode + (ps == null ? 0 : ps.servers()), JvmArgs.split(options.jvmArgs), MEMINFO);
        }
        Duration peerTimeout = peerTimeout();
        LaunchPlan plan = plan(options, cluster, programArgs, strategy, devices, nprocPerNode, err, env);
        checkStrategy(plan);
        if (ps != null) {
            ps.checkStrategy(plan);
            ParameterServerFlags.checkEndpointMap(plan, Path.of("").toAbsolutePath());
        } else if (plan.servers().isEmpty()) {
            ParameterServerFlags.checkNoPsStrategy(plan);
        } else {
            ParameterServerFlags.checkPsStrategy(plan, cluster.placement().scheduler() + " gives this job parameter servers");
        }
        if (cluster != null && options.logLevel.shows(LogLevel.INFO)) {
            err.println("fleetrun: " + cluster.describe(plan.layout()).lines().findFirst().orElseThrow());
        }
        try (LogDirLock held = LogDirLock.acquire(plan.logDir(), plan.jobId())) {
            Job job = new Job(plan, out, err, peerTimeout);
            if (options.metricsPort == null) {
                return job.run();
            }
            try (MetricsEndpoint endpoint = MetricsEndpoint.open(options.metricsHost, options.metricsPort,
                    JobMetrics.of(plan, job)::render)) {
                if (options.logLevel.shows(LogLevel.INFO)) {
                    err.println("fleetrun: metrics of this node's ranks at " + endpoint.url());
                }
                return job.run();
            }
        }
    }

    /** FLEET_TIMEOUT, which every process of the job inherits: a bad value is refused here, once. */
    private static Duration peerTimeout() {
        try {
            return Fleet.timeout(System.getenv("FLEET_TIMEOUT"));
        } catch (IllegalArgumentException e) {
            throw new LaunchException(e.getMessage(), e);
        }
    }

    /** Every rank would report a bad strategy file after start-up; checked here, it is reported once and nothing starts. */
    private static void checkStrategy(LaunchPlan plan) {
        if (plan.strategy() == null) {
            return;
        }
        try {
            StrategyCli.effective(plan.strategy(), new World(plan.layout().nnodes(), plan.layout().nprocPerNode(), plan.devices().kind()));
        } catch (StrategyException e) {
            throw new LaunchException("--strategy: " + String.join("; ", e.problems()), e);
        }
    }

    private static LaunchPlan plan(LaunchOptions options, DetectedCluster cluster, List<String> programArgs, Path strategy,
                                   DeviceSelection devices, int nprocPerNode, PrintStream err, Map<String, String> env)
            throws IOException {
        ParameterServerFlags ps = ParameterServerFlags.of(options);
        // one run of free ports for the trainers, the servers and then the servers' grpc++ data ports, so that none of
        // them can pick another's port
        Integer startPort = ps != null && ps.hosts() == null && options.startPort == null
                ? Integer.valueOf(FreePorts.consecutive(nprocPerNode + 2 * ps.servers())) : options.startPort;
        ClusterLayout layout = ps != null && ps.hosts() != null ? ps.hosts().trainers()
                : cluster != null ? cluster.layout(options.master, startPort, nprocPerNode, !options.dryRun)
                : ClusterLayout.plan(options.ips, options.nnodes, options.nodeRank, options.master, startPort, nprocPerNode);
        ServerLayout servers = ps != null ? ps.layout(layout) : cluster != null ? cluster.servers() : ServerLayout.none();
        List<Path> classpath = launcherClasspath();
        Program program = Program.resolve(options.program, classpath);
        return new LaunchPlan(layout, servers, devices, program, programArgs, Path.of(System.getProperty("java.home"), "bin", "java"),
                classpath, JvmArgs.split(options.jvmArgs), logDir(options.logDir), options.jobId, options.logLevel, strategy,
                options.dryRun ? CpuBinding.none("not bound (dry run)") : CpuBinding.plan(options.cpuBind, devices, nprocPerNode),
                options.dryRun ? JobToken.random() : JobTokens.forJob(options.jobTokenFile, env, layout,
                        warning -> err.println("fleetrun: WARNING: " + warning)),
                !options.dryRun && options.metricsPort != null, cluster == null || !cluster.serverHere());
    }

    /** The passes the strategy selects for this world, in order (the dry run without a PROGRAM). */
    private static String compilerPipeline(Path strategyFileOrNull, World world) {
        List<String> passes = Pipeline.passNames(StrategyCli.effective(strategyFileOrNull, world));
        return "compiler pipeline: " + (passes.isEmpty() ? "(no passes)" : String.join(" -> ", passes))
                + "\n(name a PROGRAM after --dry_run to see what each pass does to it: fused ops, gradient buckets and rings)";
    }

    /** The host backend "auto" picks for the trainers' default group in this layout, and why. */
    private static String collectiveBackend(int nodes, int ranksPerNode) {
        List<String> hosts = new ArrayList<>();
        for (int n = 0; n < nodes; n++) {
            for (int r = 0; r < ranksPerNode; r++) {
                hosts.add("node" + n);
            }
        }
        BackendChoice choice = BackendChoice.of(Backend.AUTO, new Locality(hosts));
        return "collective backend: " + choice + "\n  considered: " + String.join("\n              ", choice.considered());
    }

    private static Path existingFile(String value, String flag) {
        try {
            Path path = Path.of(value).toAbsolutePath().normalize();
            if (!Files.isRegularFile(path)) {
                throw new LaunchException(flag + " " + value + ": file not found (looked for " + path + ")");
            }
            return path;
        } catch (InvalidPathException e) {
            throw new LaunchException(flag + " " + Quoted.of(value) + ": not a valid path (" + e.getReason() + ")", e);
        }
    }

    private static Path logDir(String value) {
        try {
            Path path = Path.of(value).toAbsolutePath().normalize();
            if (Files.exists(path) && !Files.isDirectory(path)) {
                throw new LaunchException("--log_dir " + value + ": " + path + " exists and is not a directory");
            }
            return path;
        } catch (InvalidPathException e) {
            throw new LaunchException("--log_dir " + Quoted.of(value) + ": not a valid path (" + e.getReason() + ")", e);
        }
    }

    /** The launcher's own classpath (bin/fleetrun: build/lib/*), which every rank shares. */
    private static List<Path> launcherClasspath() {
        return Arrays.stream(System.getProperty("java.class.path", "").split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry).toAbsolutePath())
                .toList();
    }

    private static boolean wantsDebug(String[] args) {
        for (int i = 0; i < args.length; i++) {
            if (args[i].equalsIgnoreCase("--log_level=debug") || args[i].equals("--log_level") && i + 1 < args.length && args[i + 1].equalsIgnoreCase("debug")) {
                return true;
            }
        }
        return false;
    }

    private static int fail(PrintStream err, String message, Exception e, boolean debug, int code) {
        err.println("fleetrun: " + message);
        if (debug) {
            e.printStackTrace(err);
        }
        return code;
    }

    private static String[] footer() {
        Map<String, String> builtins = NamedPrograms.all();
        List<String> lines = new ArrayList<>();
        lines.add("");
        lines.add("Programs by name (the built-in ones and any a jar on CLASSPATH registers):");
        int width = builtins.keySet().stream().mapToInt(String::length).max().orElse(0);
        builtins.forEach((name, mainClass) -> lines.add("  " + name + " ".repeat(width - name.length() + 2) + mainClass));
        lines.add("");
        lines.add("Examples:");
        lines.add("  bin/fleetrun --nproc_per_node 1 mnist");
        lines.add("  bin/fleetrun --nproc_per_node 2 --strategy strategy.yaml com.acme.Train --epochs 3");
        lines.add("  bin/fleetrun --ips 10.0.0.1,10.0.0.2 --nproc_per_node 4 train.jar    # the same command on each host");
        lines.add("  bin/fleetrun --server_num 2 --worker_num 2 --strategy ps.yaml ctr --data_dir data/ctr   # parameter servers");
        lines.add("Details: docs/LAUNCHER.md");
        return lines.toArray(String[]::new);
    }
}
