package org.fleet4j.fleet;

import java.util.List;
import java.util.Map;
import org.fleet4j.compiler.Pipeline;
import org.fleet4j.compiler.RingLayout;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * In parameter-server mode (strategy mode ps) {@code minimize} instead appends backward and the optimizer, then the
 * PS compile step rewrites the program into the worker's (pulls and pushes; the updates move to the servers) and
 * prints the plan: which table and block lives on which server. Otherwise:
 * synchronous data parallelism around an optimizer: after backward, every gradient is allreduced ({@code c_allreduce},
 * avg or sum per gradient_scale_configs.scale_strategy) before the updates, and the startup program broadcasts every
 * parameter from rank 0 ({@code c_broadcast}) so all ranks start from the same values. A world of one inserts nothing.
 * The compiler then rewrites the program with the passes the strategy selects, and prints what each pass did.
 */
public final class DistributedOptimizer {
    private final Optimizer inner;
    private final EffectiveStrategy strategy;
    private final RingLayout rings;
    private final int worldSize;
    private final int ringId;
    private final boolean dryRun;
    private final ParameterServerJob ps;

    /**
     * {@code rings}: the layout Fleet opened, which the compiler's hierarchical pass must use; {@code ps}: the job's
     * parameter-server side, null in collective mode.
     */
    DistributedOptimizer(Optimizer inner, EffectiveStrategy strategy, RingLayout rings, int worldSize, int ringId,
                         boolean dryRun, ParameterServerJob ps) {
        if (inner == null) {
            throw new IllegalArgumentException("distributedOptimizer needs an optimizer, got null");
        }
        this.inner = inner;
        this.strategy = strategy;
        this.rings = rings;
        this.worldSize = worldSize;
        this.ringId = ringId;
        this.dryRun = dryRun;
        this.ps = ps;
    }

    public Optimizer inner() {
        return inner;
    }

    /** "avg" or "sum": how the gradients of the ranks combine. */
    public String scaleStrategy() {
        return strategy.get(StrategySchema.GRADIENT_SCALE_STRATEGY);
    }

    /**
     * Appends backward, the gradient allreduces and the updates to the loss's program; returns the parameters and
     * gradients. In a dry run ({@link Fleet#DRY_RUN_ENV}) the process exits with status 0 once the compiler's report
     * is printed: what the strategy does to this program is the dry run's answer, and nothing is left to run.
     */
    public List<ParamGrad> minimize(Var loss) {
        Program main = loss.block().program();
        Program startup = main.startupProgram();
        if (startup == null) {
            throw new IrException("the program of loss '" + loss.name() + "' has no startup program; build it with"
                    + " Layers(main, startup) so parameters can be broadcast from rank 0");
        }
        List<ParamGrad> grads = Backward.appendBackward(loss);
        if (ps != null) {
            inner.applyGradients(main, grads);
            System.out.print(ps.compile(main).describe() + ps.describeTransport());
            exitIfDryRun("parameter-server plan", "trainers and servers");
            return grads;
        }
        if (worldSize > 1) {
            Block block = main.globalBlock();
            for (ParamGrad pg : grads) {
                block.appendOp(CollectiveOpTypes.ALLREDUCE, Map.of("X", List.of(pg.grad())), Map.of("Out", List.of(pg.grad())),
                        Map.of(CollectiveOpTypes.RING_ID, ringId, CollectiveOpTypes.REDUCE_ATTR, scaleStrategy()));
            }
            Block init = startup.globalBlock();
            for (ParamGrad pg : grads) {
                if (!init.hasVar(pg.param())) {
                    throw new IrException("parameter '" + pg.param() + "' is not created by the startup program, so rank 0"
                            + " cannot broadcast its initial value");
                }
                init.appendOp(CollectiveOpTypes.BROADCAST, Map.of("X", List.of(pg.param())), Map.of("Out", List.of(pg.param())),
                        Map.of(CollectiveOpTypes.RING_ID, ringId, CollectiveOpTypes.ROOT, 0));
            }
        }
        inner.applyGradients(main, grads);
        System.out.print(Pipeline.forStrategy(strategy, rings).runInPlace(main).describe());
        exitIfDryRun("compiled program", "the " + worldSize + " ranks");
        return grads;
    }

    private void exitIfDryRun(String what, String who) {
        if (dryRun) {
            System.out.println("fleet: dry run: the " + what + " is what " + who + " would run; nothing ran");
            System.out.flush();
            System.exit(0);
        }
    }
}
