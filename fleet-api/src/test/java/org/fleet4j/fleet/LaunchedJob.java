package org.fleet4j.fleet;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A job started through the real launcher ({@code org.fleet4j.launch.FleetRun} in its own JVM, as bin/fleetrun runs
 * it) on this test's classpath, which the launcher hands to every rank. Output goes to files under the work folder.
 */
public record LaunchedJob(int exitCode, String stdout, String stderr, Path logDir) {
    /** Rank JVMs of tests run short jobs: a quick-starting small JVM is enough. */
    public static final String LIGHT_JVM = "-XX:TieredStopAtLevel=1 -Xshare:auto -XX:+UseSerialGC -Xmx256m";

    /** Runs {@code fleetrun --nproc_per_node N --log_dir WORK/log --jvm_args LIGHT_JVM PROGRAM ARGS} and waits. */
    public static LaunchedJob run(Path work, int nproc, Duration timeout, String program, String... programArgs)
            throws IOException, InterruptedException {
        return run(work, nproc, Map.of(), timeout, program, programArgs);
    }

    /** As {@link #run(Path, int, Duration, String, String...)}, with extra environment for the launcher and its ranks. */
    public static LaunchedJob run(Path work, int nproc, Map<String, String> env, Duration timeout, String program,
                                  String... programArgs) throws IOException, InterruptedException {
        Files.createDirectories(work);
        Path logDir = work.resolve("log");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:+UseSerialGC",
                "--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
                "-cp", System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
                "org.fleet4j.launch.FleetRun", "--nproc_per_node", "" + nproc, "--log_dir", logDir.toString(),
                "--jvm_args", LIGHT_JVM, program));
        command.addAll(List.of(programArgs));
        File out = work.resolve("launcher.out").toFile();
        File err = work.resolve("launcher.err").toFile();
        ProcessBuilder builder = new ProcessBuilder(command).directory(work.toFile()).redirectOutput(out).redirectError(err);
        builder.environment().putAll(env);
        Process p = builder.start();
        p.getOutputStream().close();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError("launcher of " + program + " still running after " + timeout + "; stderr:\n"
                    + Files.readString(err.toPath()));
        }
        return new LaunchedJob(p.exitValue(), Files.readString(out.toPath()), Files.readString(err.toPath()), logDir);
    }

    /** For assertion messages: the launcher's output and every rank's log. */
    public String describe() throws IOException {
        StringBuilder s = new StringBuilder("exit " + exitCode + "\nstdout:\n" + stdout + "\nstderr:\n" + stderr);
        if (Files.isDirectory(logDir)) {
            try (var logs = Files.list(logDir)) {
                for (Path log : logs.sorted().toList()) {
                    s.append("\n--- ").append(log.getFileName()).append(":\n").append(Files.readString(log));
                }
            }
        }
        return s.toString();
    }
}
