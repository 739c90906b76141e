package org.fleet4j.fleet;

import java.io.PrintStream;
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
 * Synchronous data parallelism around an optimizer: after backward, every gradient is allreduced
 * ({@code c_allreduce}, avg or sum per gradient_scale_configs.scale_strategy) before the updates, and the startup
 * program broadcasts every parameter from rank 0 ({@code c_broadcast}) so all ranks start from the same values. A
 * world of one inserts nothing. The compiler then rewrites the program with the passes the strategy selects; what each
 * pass did goes to the log, and in a dry run on a GPU world also where each op would run.
 */
public final class CollectiveOptimizer implements DistributedOptimizer {
    private final Optimizer inner;
    private final EffectiveStrategy strategy;
    private final RingLayout rings;
    private final int worldSize;
    private final int ringId;
    private final boolean dryRun;
    private final PrintStream log;

    /** {@code rings}: the layout Fleet opened, which the compiler's hierarchical pass must use. */
    CollectiveOptimizer(Optimizer inner, EffectiveStrategy strategy, RingLayout rings, int worldSize, int ringId,
                        boolean dryRun, PrintStream log) {
        if (inner == null) {
            throw new IllegalArgumentException("distributedOptimizer needs an optimizer, got null");
        }
        this.inner = inner;
        this.strategy = strategy;
        this.rings = rings;
        this.worldSize = worldSize;
        this.ringId = ringId;
        this.dryRun = dryRun;
        this.log = log;
    }

    @Override
    public Optimizer inner() {
        return inner;
    }

    /** "avg" or "sum": how the gradients of the ranks combine. */
    public String scaleStrategy() {
        return strategy.get(StrategySchema.GRADIENT_SCALE_STRATEGY);
    }

    @Override
    public List<ParamGrad> minimize(Var loss) {
        Program main = loss.block().program();
        Program startup = main.startupProgram();
        if (startup == null) {
            throw new IrException("the program of loss '" + loss.name() + "' has no startup program; build it with"
                    + " Layers(main, startup) so parameters can be broadcast from rank 0");
        }
        List<ParamGrad> grads = Backward.appendBackward(loss);
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
        log.print(Pipeline.forStrategy(strategy, rings).runInPlace(main).describe());
        if (dryRun) {
            if (strategy.world().onGpu()) {
                log.print(OpPlacements.describe(main, startup, strategy.world().device()));
            }
            throw new DryRunFinished("fleet: dry run: the compiled program is what "
                    + (worldSize == 1 ? "the rank" : "the " + worldSize + " ranks") + " would run; nothing ran");
        }
        return grads;
    }
}
