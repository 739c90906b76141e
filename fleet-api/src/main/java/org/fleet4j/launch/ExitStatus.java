package org.fleet4j.launch;

import java.util.Map;

/** Words for a process's exit code; the JDK reports death by signal N as 128 + N. */
final class ExitStatus {
    private static final Map<Integer, String> SIGNALS = Map.of(
            1, "SIGHUP", 2, "SIGINT", 3, "SIGQUIT", 4, "SIGILL", 6, "SIGABRT",
            7, "SIGBUS", 8, "SIGFPE", 9, "SIGKILL", 11, "SIGSEGV", 15, "SIGTERM");

    private ExitStatus() {
    }

    static String describe(int code) {
        int signal = code - 128;
        if (signal > 0 && signal < 65) {
            return "was killed by signal " + signal + " (" + SIGNALS.getOrDefault(signal, "SIG" + signal) + ", exit code " + code + ")";
        }
        return "exited with code " + code;
    }
}
