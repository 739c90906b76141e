package org.fleet4j.fleet;

import java.util.List;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.optim.Optimizer;

/**
 * An optimizer made distributed by {@link Fleet#distributedOptimizer}: {@link #minimize} appends backward and the
 * updates to the loss's program and rewrites it for the job, as collective data parallelism
 * ({@link CollectiveOptimizer}) or against parameter servers ({@link ParameterServerOptimizer}), by the strategy's
 * mode. What the rewrite did is written to Fleet's log. In a dry run ({@link Fleet#DRY_RUN_ENV}) {@code minimize}
 * throws {@link DryRunFinished} once that report is written: what the strategy does to this program is the dry run's
 * answer, and the program has nothing left to run ({@code fleetrun} and the built-in programs end with status 0).
 */
public sealed interface DistributedOptimizer permits CollectiveOptimizer, ParameterServerOptimizer {
    Optimizer inner();

    /** Appends backward, what the job needs around the updates, and the updates; returns parameters and gradients. */
    List<ParamGrad> minimize(Var loss);
}
