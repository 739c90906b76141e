package org.fleet4j.fleet.cli;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.fleet4j.core.tensor.Bytes;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.fleet.DryRunFinished;
import org.fleet4j.launch.ExitCodes;
import org.fleet4j.text.Quoted;
import picocli.CommandLine;

/**
 * Runs a built-in program's command line the way every Fleet4J command behaves: a failure prints one line naming the
 * problem and exits with its code of {@link ExitCodes} (2 for a bad flag or bad input such as a missing or corrupt
 * file, 3 for a peer that died or stalled, 1 for a bug); the stack trace appears only with {@code --log_level debug}
 * (or FLEET_LOG_LEVEL=debug).
 */
public final class ProgramMain {
    private ProgramMain() {
    }

    public static int run(String name, Callable<Integer> command, String[] args) {
        CommandLine cl = new CommandLine(command);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        PrintStream err = System.err;
        cl.setParameterExceptionHandler((ex, a) -> {
            err.println(name + ": " + Quoted.message(ex.getMessage())); // picocli quotes a bad value whole
            err.println("Try '" + name + " --help' for the options.");
            return ExitCodes.BAD_INPUT;
        });
        cl.setExecutionExceptionHandler((ex, c, parsed) -> {
            if (ex instanceof DryRunFinished done) {
                System.out.println(done.getMessage());
                return 0;
            }
            boolean debug = debug(args);
            if (debug) {
                ex.printStackTrace(err);
            }
            int code = ExitCodes.of(ex);
            err.println(name + ": " + (code == ExitCodes.INTERNAL_ERROR ? "internal error: " + ex.getClass().getName() + ": "
                    + bounded(describe(ex)) + (debug ? "" : " (a bug; --log_level debug shows its stack trace)") : bounded(describe(ex))));
            return code;
        });
        try {
            return cl.execute(args);
        } catch (OutOfMemoryError e) {
            // tensors report their own (OffHeapMemoryException); this is the Java heap or memory outside Fleet4J
            if (debug(args)) {
                e.printStackTrace(err);
            }
            err.println(name + ": " + outOfMemory(e));
            return ExitCodes.BAD_INPUT;
        }
    }

    private static String outOfMemory(OutOfMemoryError e) {
        String m = describe(e);
        if (m.contains("Java heap") || m.contains("GC overhead")) {
            return "out of memory: the Java heap (limit " + Bytes.format(Runtime.getRuntime().maxMemory())
                    + ") is full; raise it with -Xmx (bin/fleetrun --jvm_args \"-Xmx8g\") or ask for less";
        }
        if (m.contains("direct buffer memory")) {
            return "out of memory: " + m + "; raise the off-heap limit with " + OffHeapMemory.LIMIT_FLAG
                    + " (bin/fleetrun --jvm_args \"" + OffHeapMemory.LIMIT_FLAG + "=16g\") or ask for less";
        }
        return "out of memory: " + m;
    }

    private static boolean debug(String[] args) {
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--log_level=debug") || (args[i].equals("--log_level") && i + 1 < args.length
                    && args[i + 1].equalsIgnoreCase("debug"))) {
                return true;
            }
        }
        String env = System.getenv("FLEET_LOG_LEVEL");
        return env != null && env.toLowerCase(Locale.ROOT).equals("debug");
    }

    /** Each line of a failure's message as {@link Quoted#message} bounds it, for messages other libraries wrote. */
    private static String bounded(String message) {
        return message.lines().map(Quoted::message).collect(Collectors.joining(System.lineSeparator()));
    }

    private static String describe(Throwable t) {
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
    }
}
