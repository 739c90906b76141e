package org.fleet4j.launch;

import java.time.Duration;

/**
 * A daemon thread in a rank that stops the rank when its launcher is gone. The launcher is the rank's parent; when it
 * dies, even by SIGKILL, the rank is handed to another parent, which this notices within a poll. The rank then stops
 * the processes it started and exits, so no job outlives its launcher.
 */
final class LauncherWatch {
    /** Exit code of a rank whose launcher died: 128 + SIGHUP, as for a process whose terminal went away. */
    static final int LAUNCHER_GONE_EXIT = 129;
    private static final Duration POLL = Duration.ofMillis(500);
    /** Shutdown hooks of the program get this long before the rank halts anyway. */
    private static final Duration EXIT_LIMIT = Duration.ofSeconds(2);

    private LauncherWatch() {
    }

    static void start(long launcherPid) {
        Thread.ofPlatform().daemon().name("fleet-launcher-watch").start(() -> watch(launcherPid));
    }

    private static void watch(long launcherPid) {
        try {
            while (parentIs(launcherPid)) {
                Thread.sleep(POLL);
            }
        } catch (InterruptedException e) {
            return;
        }
        System.err.println("rank " + System.getenv().getOrDefault("FLEET_RANK", "?") + ": the launcher (pid " + launcherPid
                + ") is gone; stopping this rank and the processes it started");
        ProcessHandle.current().descendants().forEach(ProcessHandle::destroy);
        Thread.ofPlatform().daemon().name("fleet-launcher-watch-halt").start(() -> {
            try {
                Thread.sleep(EXIT_LIMIT);
            } catch (InterruptedException e) {
                return;
            }
            Runtime.getRuntime().halt(LAUNCHER_GONE_EXIT);
        });
        System.exit(LAUNCHER_GONE_EXIT);
    }

    private static boolean parentIs(long pid) {
        return ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L) == pid;
    }
}
