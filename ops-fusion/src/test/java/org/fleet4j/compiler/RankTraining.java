package org.fleet4j.compiler;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * One rank of {@link TwoRankCompilationTest}: opens the default process group from the FLEET_* environment,
 * registers a real {@code c_allreduce} on it, trains on its half of every batch and writes the final float
 * persistables of each run, one line per run ({@link Nets#valuesLine}), to {@code FLEET_LOG_DIR/rank-R.values}: the MLP uncompiled and then
 * compiled with op fusion, buckets and the fused optimizer; or (argument {@code sync_batch_norm}) a batch-norm net
 * compiled with sync_batch_norm.
 */
public final class RankTraining {
    private RankTraining() {
    }

    public static void main(String[] args) throws Exception {
        GroupOptions d = GroupOptions.defaults();
        // a short limit, so a rank whose peer died fails within the test's own wait and names the peer
        GroupOptions options = new GroupOptions(d.backend(), Duration.ofSeconds(40), d.verifyCalls(), d.shmSlotBytes(),
                d.tcpChunkBytes());
        try (ProcessGroup group = ProcessGroups.init(options)) {
            int steps = Integer.parseInt(args[0]);
            boolean syncBn = args.length > 1 && args[1].equals("sync_batch_norm");
            Nets.Net net = syncBn ? bnNet(true) : Nets.mlpWithCollectiveAllreduce("relu", new int[]{16, 12}, new Adam(0.02), "avg");
            DistributedStrategy s = syncBn ? new DistributedStrategy().syncBatchNorm(true).fuseAllReduceOps(false)
                    : new DistributedStrategy()
                    .set(StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS, true)
                    .set(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS, true)
                    .fuseGradSizeInMB(1).fuseGradSizeInTFLOPS(3).lastCommGroupSizeMB(0.001);
            Compilation c = Pipeline.forStrategy(EffectiveStrategy.resolve(s, new World(1, group.size(), "cpu")))
                    .run(net.main());
            System.out.print(c.describe());
            StringBuilder out = new StringBuilder();
            for (Program p : syncBn ? List.of(c.program()) : List.of(net.main(), c.program())) {
                out.append(run(p, net, group, steps)).append('\n');
            }
            Files.writeString(Path.of(System.getenv("FLEET_LOG_DIR"), "rank-" + group.rank() + ".values"), out);
        }
    }

    /** x [-1, 8] -> fc 12 -> batch_norm -> relu -> fc 3 -> softmax cross-entropy, SGD; with avg allreduces when asked. */
    static Nets.Net bnNet(boolean allreduce) {
        Program main = new Program().setRandomSeed(9);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = nn.relu(nn.batchNorm(nn.fc(x, 12, null), false));
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(h, 3, null), y));
        List<ParamGrad> grads = Backward.appendBackward(loss);
        if (allreduce) {
            for (ParamGrad pg : grads) {
                main.globalBlock().appendOp(CollectiveOpTypes.ALLREDUCE, Map.of("X", List.of(pg.grad())),
                        Map.of("Out", List.of(pg.grad())), Map.of("ring_id", 0, "reduce", "avg"));
            }
        }
        new SGD(0.2).applyGradients(main, grads);
        return new Nets.Net(main, startup, loss.name());
    }

    private static String run(Program main, Nets.Net net, ProcessGroup group, int steps) {
        Executor exe = new Executor(ExecutorOptions.defaults(), ExecContext.builder().ring(0, group).build());
        Scope scope = new Scope();
        exe.run(net.startup(), scope);
        for (int step = 0; step < steps; step++) {
            exe.run(main, scope, half(Nets.batch(step), group.rank(), group.size()), List.of());
        }
        return Nets.valuesLine(main, scope);
    }

    /** This rank's rows of a 16-sample batch. */
    static Map<String, Tensor> half(Map<String, Tensor> batch, int rank, int world) {
        long rows = 16 / world;
        return Map.of("x", batch.get("x").rows(rank * rows, (rank + 1) * rows),
                "y", batch.get("y").rows(rank * rows, (rank + 1) * rows));
    }
}
