package org.fleet4j.strategy.report;

import java.io.PrintStream;
import java.nio.file.Path;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.text.Quoted;

/** The strategy side of {@code fleetrun --dry_run}: describe the world and the effective strategy, start nothing. */
public final class StrategyCli {
    private StrategyCli() {
    }

    /**
     * Prints the world and the effective strategy of the file (all defaults when the file is null)
     * as a table or as one JSON object.
     *
     * @param format "table" or "json"
     * @param device "cpu" or "gpu"
     * @return 0 after printing to {@code out}, or 2 after printing every problem, one per line and
     *         without a stack trace, to {@code err}
     */
    public static int dryRun(Path strategyFileOrNull, int nnodes, int nprocPerNode, String device, String format,
                             PrintStream out, PrintStream err) {
        try {
            if (!DryRunReport.formats().contains(format)) {
                throw new StrategyException("--format: " + Quoted.of(format) + " is not allowed; allowed: "
                        + String.join(", ", DryRunReport.formats()));
            }
            EffectiveStrategy effective = effective(strategyFileOrNull, new World(nnodes, nprocPerNode, device));
            out.print(format.equals("json") ? DryRunReport.json(effective) : DryRunReport.table(effective));
            out.flush();
            return 0;
        } catch (StrategyException e) {
            e.problems().forEach(problem -> err.println("error: " + problem));
            err.flush();
            return 2;
        }
    }

    /** The effective strategy of the file (all defaults when it is null) for a world; throws StrategyException. */
    public static EffectiveStrategy effective(Path strategyFileOrNull, World world) {
        DistributedStrategy strategy = strategyFileOrNull == null
                ? new DistributedStrategy() : DistributedStrategy.load(strategyFileOrNull);
        return EffectiveStrategy.resolve(strategy, world);
    }
}
