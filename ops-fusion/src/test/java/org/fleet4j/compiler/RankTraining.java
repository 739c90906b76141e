package org.fleet4j.compiler;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ProcessGroups;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.EffectiveStrategy;
import org.fleet4j.strategy.StrategySchema;
import org.fleet4j.strategy.World;

/**
 * One rank of {@link TwoRankCompilationTest}: opens the default process group from the FLEET_* environment,
 * registers a real {@code c_allreduce} on it, trains the MLP on its half of every batch uncompiled and then
 * compiled with every pass on, and writes both runs' final values to {@code FLEET_LOG_DIR/rank-R.values}.
 */
public final class RankTraining {
    private RankTraining() {
    }

    public static void main(String[] args) throws Exception {
        try (ProcessGroup group = ProcessGroups.init(GroupOptions.defaults())) {
            registerAllreduce(group);
            int steps = Integer.parseInt(args[0]);
            Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{16, 12}, new Adam(0.02), "avg");
            DistributedStrategy s = new DistributedStrategy()
                    .set(StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS, true)
                    .set(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS, true)
                    .fuseGradSizeInMB(1).fuseGradSizeInTFLOPS(3).lastCommGroupSizeMB(0.001);
            Compilation c = Pipeline.forStrategy(EffectiveStrategy.resolve(s, new World(1, group.size(), "cpu")))
                    .run(net.main());
            System.out.print(c.describe());
            StringBuilder out = new StringBuilder();
            for (Program p : List.of(net.main(), c.program())) {
                out.append(run(p, net, group, steps)).append('\n');
            }
            Files.writeString(Path.of(System.getenv("FLEET_LOG_DIR"), "rank-" + group.rank() + ".values"), out);
        }
    }

    private static String run(Program main, Nets.Net net, ProcessGroup group, int steps) {
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(net.startup(), scope);
        for (int step = 0; step < steps; step++) {
            exe.run(main, scope, half(Nets.batch(step), group.rank(), group.size()), List.of());
        }
        List<String> values = new ArrayList<>();
        for (var v : main.globalBlock().vars()) {
            if (v.isParameter()) {
                for (float f : scope.get(v.name()).toFloatArray()) {
                    values.add(String.format(Locale.ROOT, "%.9g", f));
                }
            }
        }
        return String.join(" ", values);
    }

    /** This rank's rows of a 16-sample batch. */
    static Map<String, Tensor> half(Map<String, Tensor> batch, int rank, int world) {
        long rows = 16 / world;
        return Map.of("x", batch.get("x").rows(rank * rows, (rank + 1) * rows),
                "y", batch.get("y").rows(rank * rows, (rank + 1) * rows));
    }

    private static void registerAllreduce(ProcessGroup group) {
        OpRegistry.register(OpSpec.builder(FuseAllReducePass.ALLREDUCE).in("X").out("Out")
                .attr("ring_id", AttrType.INT, 0).attr("reduce", AttrType.STRING, "sum")
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> {
                    ReduceOp reduce = op.stringAttr("reduce").equals("avg") ? ReduceOp.AVG : ReduceOp.SUM;
                    return a -> {
                        Tensor x = a.in("X");
                        group.allreduce(x.segment(), x.dtype() == DType.BF16 ? DataType.BF16 : DataType.F32, reduce)
                                .await(Duration.ofSeconds(60));
                        a.setOut("Out", x);
                    };
                }).build());
    }
}
