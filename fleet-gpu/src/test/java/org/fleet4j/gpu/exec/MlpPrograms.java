package org.fleet4j.gpu.exec;

import java.util.List;
import java.util.Map;
import org.fleet4j.compiler.Pipeline;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.models.Mlp;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * The programs of the built-in mnist and mlp_perf: the examples' own {@link Mlp} network, minimized the way Fleet's
 * DistributedOptimizer does (gradient allreduces and parameter broadcasts on more than one rank, then the compiler's
 * passes for the strategy).
 */
final class MlpPrograms {
    private MlpPrograms() {
    }

    /** mnist's optimizers (mlp_perf uses sgd). */
    static Optimizer optimizer(String name) {
        return switch (name) {
            case "sgd" -> new SGD(0.05);
            case "momentum" -> new Momentum(LrSchedule.constant(0.05), 0.9f, false, 0f);
            case "adam" -> new Adam(0.001);
            default -> throw new IllegalArgumentException(name);
        };
    }

    /** Every compiler pass that rewrites these programs, on: the fused ops the GPU must run too. */
    static DistributedStrategy allFusions() {
        return new DistributedStrategy()
                .set(StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS, true)
                .set(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS, true)
                .set(StrategySchema.FUSE_ALL_REDUCE_OPS, true);
    }

    /** The network of widths {@code layers} trained by {@code optimizer} on {@code ranks} ranks with {@code strategy}. */
    static Mlp build(int[] layers, String optimizer, int ranks, DistributedStrategy strategy) {
        Mlp net = Mlp.build(layers, 1);
        Program main = net.main();
        List<ParamGrad> grads = Backward.appendBackward(net.loss());
        if (ranks > 1) {
            Block block = main.globalBlock();
            Block init = net.startup().globalBlock();
            for (ParamGrad pg : grads) {
                block.appendOp(CollectiveOpTypes.ALLREDUCE, Map.of("X", List.of(pg.grad())), Map.of("Out", List.of(pg.grad())),
                        Map.of("ring_id", 0, "reduce", "avg"));
                init.appendOp(CollectiveOpTypes.BROADCAST, Map.of("X", List.of(pg.param())), Map.of("Out", List.of(pg.param())),
                        Map.of("ring_id", 0, "root", 0));
            }
        }
        optimizer(optimizer).applyGradients(main, grads);
        Pipeline.forStrategy(EffectiveStrategy.resolve(strategy, new World(1, ranks, "gpu"))).runInPlace(main);
        return net;
    }
}
