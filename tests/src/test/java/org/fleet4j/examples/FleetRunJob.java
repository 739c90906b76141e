package org.fleet4j.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A job run by the real {@code bin/fleetrun} script from build/lib, which the examples module fills when it is
 * packaged, before this module's integration tests run. The launcher's output goes to files in the work folder; each
 * rank's log is LOG_DIR/workerlog.N.
 */
final class FleetRunJob {
    private static final Path FLEETRUN = Path.of("").toAbsolutePath().getParent().resolve("bin/fleetrun");

    private final Process launcher;
    private final Path work;
    private final Path logDir;

    private FleetRunJob(Process launcher, Path work, Path logDir) {
        this.launcher = launcher;
        this.work = work;
        this.logDir = logDir;
    }

    /** Starts {@code fleetrun --nproc_per_node N --log_dir WORK/log PROGRAM ARGS}; ranks get the default JIT. */
    static FleetRunJob start(Path work, int nproc, String program, String... programArgs) throws IOException {
        return start(work, nproc, "", List.of(), program, programArgs);
    }

    /** As {@link #start(Path, int, String, String...)}, with further launcher options such as --strategy FILE. */
    static FleetRunJob start(Path work, int nproc, List<String> launcherArgs, String program, String... programArgs)
            throws IOException {
        return start(work, nproc, "", launcherArgs, program, programArgs);
    }

    /** As {@link #start(Path, int, String, String...)}, with {@code jvmArgs} added to every rank's JVM arguments. */
    static FleetRunJob startWithJvmArgs(Path work, int nproc, String jvmArgs, String program, String... programArgs)
            throws IOException {
        return start(work, nproc, jvmArgs, List.of(), program, programArgs);
    }

    /** As {@link #start(Path, int, List, String, String...)}, with {@code env} added to the launcher's environment. */
    static FleetRunJob startWithEnvironment(Path work, int nproc, Map<String, String> env, List<String> launcherArgs,
                                            String program, String... programArgs) throws IOException {
        return start(work, nproc, "", env, launcherArgs, program, programArgs);
    }

    private static FleetRunJob start(Path work, int nproc, String jvmArgs, List<String> launcherArgs, String program,
                                     String... programArgs)
            throws IOException {
        return start(work, nproc, jvmArgs, Map.of(), launcherArgs, program, programArgs);
    }

    private static FleetRunJob start(Path work, int nproc, String jvmArgs, Map<String, String> env,
                                     List<String> launcherArgs, String program, String... programArgs)
            throws IOException {
        Files.createDirectories(work);
        Path logDir = work.resolve("log");
        // SIGINT at its default, as in a terminal (a test JVM started in the background may have it ignored, and so
        // would the launcher); env execs bin/fleetrun, which execs java, so the pid is the launcher's
        List<String> command = new ArrayList<>(List.of("env", "--default-signal=INT", FLEETRUN.toString(), "--nproc_per_node", "" + nproc,
                "--log_dir", logDir.toString(), "--jvm_args", ("-XX:+UseSerialGC -Xmx512m " + jvmArgs).strip()));
        command.addAll(launcherArgs);
        command.add(program);
        command.addAll(List.of(programArgs));
        ProcessBuilder builder = new ProcessBuilder(command).directory(work.toFile());
        builder.environment().remove("CLASSPATH");
        builder.environment().putAll(env);
        Process p = builder
                .redirectOutput(work.resolve("launcher.out").toFile()).redirectError(work.resolve("launcher.err").toFile())
                .start();
        p.getOutputStream().close();
        return new FleetRunJob(p, work, logDir);
    }

    Process launcher() {
        return launcher;
    }

    Path logDir() {
        return logDir;
    }

    /** Waits for the launcher's exit code; on timeout kills the whole job and fails naming what it waited for. */
    int await(Duration timeout) throws IOException, InterruptedException {
        if (!launcher.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
            throw new AssertionError("fleetrun still running after " + timeout + "\n" + describe());
        }
        return launcher.exitValue();
    }

    String stderr() throws IOException {
        return Files.readString(work.resolve("launcher.err"));
    }

    /** For assertions and their messages: the launcher's output and every worker's and server's log. */
    String describe() throws IOException {
        StringBuilder s = new StringBuilder("stdout:\n" + Files.readString(work.resolve("launcher.out")) + "\nstderr:\n" + stderr());
        if (Files.isDirectory(logDir)) {
            try (var logs = Files.list(logDir)) {
                for (Path log : logs.filter(f -> f.getFileName().toString().matches("(worker|server)log\\.\\d+")).sorted().toList()) {
                    s.append("\n--- ").append(log.getFileName()).append(":\n").append(Files.readString(log));
                }
            }
        }
        return s.toString();
    }

    /** The JVM of global rank {@code rank}, found by the FLEET_RANK in its environment (Linux /proc). */
    ProcessHandle rankProcess(int rank) throws IOException {
        for (ProcessHandle h : launcher.descendants().toList()) {
            Path environ = Path.of("/proc", "" + h.pid(), "environ");
            if (Files.isReadable(environ)) {
                for (String entry : new String(Files.readAllBytes(environ)).split("\0")) {
                    if (entry.equals("FLEET_RANK=" + rank)) {
                        return h;
                    }
                }
            }
        }
        throw new AssertionError("no process of rank " + rank + " among the launcher's children " + launcher.descendants().toList());
    }
}
