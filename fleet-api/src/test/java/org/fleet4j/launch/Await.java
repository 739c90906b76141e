package org.fleet4j.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waits on files the rank programs write, and on processes to end, always with a timeout. */
final class Await {
    private static final Duration FILE_TIMEOUT = Duration.ofSeconds(60);

    private Await() {
    }

    /** The contents of {@code file} once it exists (written atomically by the probe). */
    static String file(Path file, LauncherRun launcher) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + FILE_TIMEOUT.toNanos();
        while (!Files.exists(file)) {
            if (!launcher.process().isAlive()) {
                throw new AssertionError("launcher exited with " + launcher.process().exitValue() + " before " + file
                        + " appeared; stderr:\n" + launcher.stderr());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(file + " did not appear within " + FILE_TIMEOUT + "; launcher stderr:\n" + launcher.stderr());
            }
            Thread.sleep(20);
        }
        return Files.readString(file);
    }

    /** True when the process with this PID is gone within the timeout. */
    static boolean gone(long pid, Duration timeout) throws InterruptedException {
        var handle = ProcessHandle.of(pid);
        if (handle.isEmpty()) {
            return true;
        }
        try {
            handle.get().onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new AssertionError(e);
        }
    }
}
