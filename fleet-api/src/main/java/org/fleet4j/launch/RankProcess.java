package org.fleet4j.launch;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.time.Duration;

/**
 * One running process of the job (a rank or a parameter server). Its stdout and stderr go to its log (workerlog.N,
 * serverlog.N); an echoed process's output is also copied live to the console, each line prefixed with
 * {@code [rank N]} (see {@link ConsoleEcho}).
 */
final class RankProcess {
    private final RankSpec spec;
    private final Process process;
    private final Thread echo;

    private RankProcess(RankSpec spec, Process process, Thread echo) {
        this.spec = spec;
        this.process = process;
        this.echo = echo;
    }

    /** Starts the process; {@code console} is where its output is echoed, or null to only log it. */
    static RankProcess start(RankSpec spec, PrintStream console) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(spec.command()).redirectErrorStream(true);
        RankEnvironment.OPTIONAL.forEach(builder.environment()::remove);
        builder.environment().putAll(spec.environment());
        if (console == null) {
            builder.redirectOutput(ProcessBuilder.Redirect.to(spec.logFile().toFile()));
        }
        Process process = builder.start();
        // A rank reading stdin sees end-of-file instead of waiting for input no one will type.
        process.getOutputStream().close();
        Thread echo = null;
        if (console != null) {
            OutputStream log = Files.newOutputStream(spec.logFile());
            echo = Thread.ofPlatform().daemon().name("fleetrun-echo-" + spec.name().replace(' ', '-'))
                    .start(() -> copy(process.getInputStream(), log, console, "[" + spec.name() + "] "));
        }
        return new RankProcess(spec, process, echo);
    }

    /**
     * Copies the rank's output to its log and, line-prefixed, to the console until the rank closes it.
     * Keeps draining even when the log cannot be written, so the rank never blocks on a full pipe.
     */
    static void copy(InputStream from, OutputStream log, PrintStream console, String prefix) {
        ConsoleEcho echo = new ConsoleEcho(console, prefix);
        byte[] buffer = new byte[8192];
        OutputStream logOrNull = log;
        try (from) {
            int n;
            while ((n = from.read(buffer)) >= 0) {
                logOrNull = writeLog(logOrNull, buffer, n, console, prefix);
                echo.write(buffer, n);
            }
        } catch (IOException closed) {
            // the rank's end of the pipe is gone: nothing more to copy
        } finally {
            echo.finish();
            closeLog(logOrNull);
        }
    }

    /** Writes to the log; returns null (and says so once) when the log cannot be written. */
    private static OutputStream writeLog(OutputStream log, byte[] bytes, int length, PrintStream console, String prefix) {
        if (log == null) {
            return null;
        }
        try {
            log.write(bytes, 0, length);
            return log;
        } catch (IOException e) {
            console.println("fleetrun: cannot write the log of " + prefix.trim() + " any more (" + e.getMessage() + "); still echoing it here");
            closeLog(log);
            return null;
        }
    }

    private static void closeLog(OutputStream log) {
        if (log == null) {
            return;
        }
        try {
            log.close();
        } catch (IOException ignored) {
            // the write errors were reported already
        }
    }

    RankSpec spec() {
        return spec;
    }

    Process process() {
        return process;
    }

    /** Waits for the echo of an exited rank to reach the console and the log. */
    void awaitOutput(Duration timeout) {
        if (echo == null) {
            return;
        }
        try {
            echo.join(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
