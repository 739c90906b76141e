package org.fleet4j.launch;

import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Path;

/** {@code --dry_run}: the strategy module prints the effective strategy for the world the flags describe. */
final class StrategyDryRun {
    private static final String STRATEGY_CLI = "org.fleet4j.strategy.StrategyCli";

    private StrategyDryRun() {
    }

    /** Returns the exit code of the dry run: 0, or 2 for a bad strategy file. */
    static int run(Path strategyOrNull, int nnodes, int nprocPerNode, String device, String format, PrintStream out, PrintStream err) {
        Method dryRun;
        try {
            dryRun = Class.forName(STRATEGY_CLI).getMethod("dryRun", Path.class, int.class, int.class, String.class, String.class,
                    PrintStream.class, PrintStream.class);
        } catch (ReflectiveOperationException e) {
            throw new LaunchException("--dry_run is not available in this build: " + STRATEGY_CLI + ".dryRun is missing from the classpath");
        }
        try {
            return (int) dryRun.invoke(null, strategyOrNull, nnodes, nprocPerNode, device, format, out, err);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(STRATEGY_CLI + ".dryRun failed", e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(STRATEGY_CLI + ".dryRun is not public", e);
        }
    }
}
