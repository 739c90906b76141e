package org.fleet4j.launch;

import java.util.Map;

/** Words for a process's exit code, and the launcher's code for it; the JDK reports death by signal N as 128 + N. */
final class ExitStatus {
    private static final Map<Integer, String> SIGNALS = Map.of(
            1, "SIGHUP", 2, "SIGINT", 3, "SIGQUIT", 4, "SIGILL", 6, "SIGABRT",
            7, "SIGBUS", 8, "SIGFPE", 9, "SIGKILL", 11, "SIGSEGV", 15, "SIGTERM");

    private ExitStatus() {
    }

    /** "exited with code 3 (a peer died or stalled)", "was killed by signal 9 (SIGKILL, exit code 137)". */
    static String describe(int code) {
        if (isSignal(code)) {
            int signal = code - 128;
            return "was killed by signal " + signal + " (" + SIGNALS.getOrDefault(signal, "SIG" + signal) + ", exit code " + code + ")";
        }
        String meaning = ExitCodes.meaning(code);
        return "exited with code " + code + (meaning.isEmpty() ? "" : " (" + meaning + ")");
    }

    /**
     * The launcher's exit code for a process of the job that failed with {@code code}: its own code, but
     * {@link ExitCodes#PEER_FAILED} for one that a signal killed (the launcher's own 130 and 143 mean that it was
     * signalled itself) and for one that ended with 0 too early.
     */
    static int launcherCode(int code) {
        return code == 0 || isSignal(code) ? ExitCodes.PEER_FAILED : code;
    }

    private static boolean isSignal(int code) {
        int signal = code - 128;
        return signal > 0 && signal < 65;
    }
}
