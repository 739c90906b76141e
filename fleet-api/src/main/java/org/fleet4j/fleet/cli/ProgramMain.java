package org.fleet4j.fleet.cli;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.fleet4j.core.tensor.Bytes;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.text.Quoted;
import picocli.CommandLine;

/**
 * Runs a built-in program's command line the way every Fleet4J command behaves: a bad flag or bad input (a
 * missing or corrupt file, an impossible shape) prints one line naming the problem and exits 2; the stack trace
 * appears only with {@code --log_level debug} (or FLEET_LOG_LEVEL=debug).
 */
public final class ProgramMain {
    private ProgramMain() {
    }

    /** Exceptions that mean "the user's input is wrong", as opposed to a bug or a failed peer. */
    public static boolean isUserError(Throwable t) {
        String n = t.getClass().getName();
        return t instanceof IllegalArgumentException
                || t instanceof java.nio.file.NoSuchFileException
                || n.endsWith("DataFormatException") || n.endsWith("CheckpointException") || n.endsWith("OffHeapMemoryException")
                || n.endsWith("IrException") || n.endsWith("StrategyException") || n.endsWith("ExecutionException");
    }

    public static int run(String name, Callable<Integer> command, String[] args) {
        CommandLine cl = new CommandLine(command);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        PrintStream err = System.err;
        cl.setParameterExceptionHandler((ex, a) -> {
            err.println(name + ": " + Quoted.message(ex.getMessage())); // picocli quotes a bad value whole
            err.println("Try '" + name + " --help' for the options.");
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, c, parsed) -> {
            boolean debug = debug(args);
            if (debug) {
                ex.printStackTrace(err);
            }
            err.println(name + ": " + bounded(describe(ex)));
            return isUserError(ex) || isUserError(rootCause(ex)) ? 2 : 1;
        });
        try {
            return cl.execute(args);
        } catch (OutOfMemoryError e) {
            // tensors report their own (OffHeapMemoryException); this is the Java heap or memory outside Fleet4J
            if (debug(args)) {
                e.printStackTrace(err);
            }
            err.println(name + ": " + outOfMemory(e));
            return 2;
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

    private static Throwable rootCause(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
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
