package org.fleet4j.launch;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A launcher started as its own process, the way users run it, with its output captured. */
final class LauncherRun {
    private final Process process;
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    private final Thread outPump;
    private final Thread errPump;

    private LauncherRun(Process process) {
        this.process = process;
        this.outPump = pump(process.getInputStream(), stdout);
        this.errPump = pump(process.getErrorStream(), stderr);
    }

    /** Runs {@code FleetRun.main} in a fresh JVM on this test's classpath, with the JVM flags of bin/fleetrun. */
    static LauncherRun javaMain(Path workDir, Map<String, String> env, List<String> args) throws IOException {
        // SIGINT at its default, as in a terminal: a test JVM started in the background (nohup, `cmd &` in a script)
        // inherits SIGINT ignored, and so would the launcher; env execs java in its own place, so the pid is the launcher's
        List<String> command = new ArrayList<>(List.of("env", "--default-signal=INT"));
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of("-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:+UseSerialGC", "--enable-native-access=ALL-UNNAMED"));
        command.add("-cp");
        command.add(testClasspath());
        command.add(FleetRun.class.getName());
        command.addAll(args);
        return start(command, workDir, env);
    }

    static LauncherRun start(List<String> command, Path workDir, Map<String, String> env) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile());
        // a null value removes an inherited variable
        env.forEach((name, value) -> {
            if (value == null) {
                builder.environment().remove(name);
            } else {
                builder.environment().put(name, value);
            }
        });
        Process process = builder.start();
        process.getOutputStream().close();
        return new LauncherRun(process);
    }

    /** Surefire runs tests from a manifest-only jar; the real classpath is in this property. */
    static String testClasspath() {
        return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    }

    Process process() {
        return process;
    }

    /** Waits for the launcher to exit and returns its exit code; fails the test if it takes longer. */
    int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("launcher still running after " + timeout + "; stderr so far:\n" + stderr());
        }
        outPump.join(timeout.toMillis());
        errPump.join(timeout.toMillis());
        return process.exitValue();
    }

    String stdout() {
        synchronized (stdout) {
            return stdout.toString(StandardCharsets.UTF_8);
        }
    }

    String stderr() {
        synchronized (stderr) {
            return stderr.toString(StandardCharsets.UTF_8);
        }
    }

    private static Thread pump(InputStream from, ByteArrayOutputStream to) {
        return Thread.ofPlatform().daemon().start(() -> {
            byte[] buffer = new byte[8192];
            try (from) {
                int n;
                while ((n = from.read(buffer)) >= 0) {
                    synchronized (to) {
                        to.write(buffer, 0, n);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
