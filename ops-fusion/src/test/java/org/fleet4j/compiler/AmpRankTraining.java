package org.fleet4j.compiler;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;

/**
 * One rank of {@link AmpTwoRankTest}: opens the default process group from the FLEET_* environment, registers a real
 * {@code c_allreduce} on it, compiles the MLP with {@link #strategy} (amp in bfloat16 plus gradient buckets), trains
 * on its half of every batch, with an inf in rank 1's first sample at step {@code args[1]}, and writes the final
 * float persistables (loss scale included) to {@code FLEET_LOG_DIR/rank-R.values}.
 */
public final class AmpRankTraining {
    static final int POISONED_RANK = 1;

    private AmpRankTraining() {
    }

    static DistributedStrategy strategy() {
        DistributedStrategy s = new DistributedStrategy().amp(true)
                .fuseGradSizeInMB(1).fuseGradSizeInTFLOPS(3).lastCommGroupSizeMB(0.001);
        s.ampConfigs().dtype("bfloat16").initLossScaling(1024).decrEveryNNanOrInf(1).decrRatio(0.5);
        return s;
    }

    static Nets.Net net(boolean allreduce) {
        return allreduce ? Nets.mlpWithCollectiveAllreduce("relu", new int[]{16, 12}, new SGD(0.1), "avg")
                : Nets.mlp("relu", new int[]{16, 12}, p -> new SGD(0.1));
    }

    /** Step {@code step}'s 16-sample batch, with an inf in sample 8 (rank 1's first) at the poisoned step. */
    static Map<String, Tensor> batch(int step, int poisonedStep) {
        Map<String, Tensor> b = Nets.batch(step);
        if (step == poisonedStep) {
            b.get("x").setFloat(8 * 8, Float.POSITIVE_INFINITY);
        }
        return b;
    }

    public static void main(String[] args) throws Exception {
        GroupOptions d = GroupOptions.defaults();
        // a short limit, so a rank whose peer died fails within the test's own wait and names the peer
        GroupOptions options = new GroupOptions(d.backend(), Duration.ofSeconds(40), d.verifyCalls(), d.shmSlotBytes(),
                d.tcpChunkBytes());
        try (ProcessGroup group = ProcessGroups.init(options)) {
            int steps = Integer.parseInt(args[0]);
            int poisonedStep = Integer.parseInt(args[1]);
            Nets.Net net = net(true);
            Compilation c = Pipeline.forStrategy(EffectiveStrategy.resolve(strategy(), new World(1, group.size(), "cpu")))
                    .run(net.main());
            System.out.print(c.describe());
            Program main = c.program();
            Executor exe = new Executor(ExecutorOptions.defaults(), ExecContext.builder().ring(0, group).build());
            Scope scope = new Scope();
            exe.run(main.startupProgram(), scope);
            for (int step = 0; step < steps; step++) {
                exe.run(main, scope, RankTraining.half(batch(step, poisonedStep), group.rank(), group.size()), List.of());
            }
            Files.writeString(Path.of(System.getenv("FLEET_LOG_DIR"), "rank-" + group.rank() + ".values"),
                    Nets.valuesLine(main, scope) + "\n");
        }
    }
}
