package org.fleet4j.launch;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.fleet.Fleet;

/**
 * {@code fleetrun --dry_run PROGRAM}: runs the first rank of the plan alone with {@link Fleet#DRY_RUN_ENV} set, so the
 * program builds its model, Fleet opens no group, and {@code minimize} prints what the compiler did to the program
 * for this world (passes, fused ops, gradient buckets with their sizes and rings) and exits. Nothing trains.
 */
final class DryRunProgram {
    /** Building a model and compiling it takes seconds; a program that has not got there by now never will. */
    static final Duration LIMIT = Duration.ofSeconds(60);
    /** FLEET_TIMEOUT of the dry-run rank: a program that waits for other ranks anyway (there are none) fails fast. */
    static final String RANK_TIMEOUT_SECONDS = "10";

    private DryRunProgram() {
    }

    static int run(LaunchPlan plan, PrintStream out) throws IOException {
        RankSpec first = plan.ranks().get(0);
        Map<String, String> env = new HashMap<>(first.environment());
        env.put(Fleet.DRY_RUN_ENV, "1");
        env.put("FLEET_TIMEOUT", RANK_TIMEOUT_SECONDS);
        RankSpec spec = first.withEnvironment(env);
        Files.createDirectories(plan.logDir());
        RankProcess rank = RankProcess.start(spec, out);
        boolean exited;
        try {
            exited = rank.process().waitFor(LIMIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            exited = false;
        }
        if (!exited) {
            ProcessTrees.terminate(List.of(rank.process().toHandle()), Duration.ofSeconds(2), Duration.ofSeconds(5));
            throw new LaunchException("--dry_run: " + plan.program().mainClass() + " did not reach minimize within "
                    + LIMIT.toSeconds() + " s; only a program that calls fleet.distributedOptimizer(...).minimize has a"
                    + " compiled program to show (" + spec.name() + "'s output is in " + spec.logFile() + ")");
        }
        rank.awaitOutput(Duration.ofSeconds(5));
        return rank.process().exitValue();
    }
}
