package org.fleet4j.compiler;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * mlp_perf's training step (784-512-512-10, batch 64 per rank, SGD, avg allreduce of every gradient) on two rank
 * processes, uncompiled against compiled with the passes named by the argument ({@code e}: fuse_elewise_add_act_ops,
 * {@code o}: fuse_all_optimizer_ops, {@code r}: fuse_all_reduce_ops), taking turns 5 steps at a time in the same
 * job. Prints rank 0's medians. Not a unit test.
 * <pre>
 * TwoRankMlpBenchmark eor        (starts both ranks itself)
 * </pre>
 */
public final class TwoRankMlpBenchmark {
    private TwoRankMlpBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        if (System.getenv("FLEET_RANK") == null) {
            launch(args[0]);
        } else {
            rank(args[0]);
        }
    }

    private static void launch(String passes) throws Exception {
        String javaBin = ProcessHandle.current().info().command().orElseThrow();
        int port = FreePorts.one();
        Path dir = Files.createTempDirectory("two-rank-mlp");
        String job = "mlp-bench-" + ProcessHandle.current().pid();
        String token = JobToken.random().text();
        List<Process> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                ProcessBuilder pb = new ProcessBuilder(javaBin, "--enable-native-access=ALL-UNNAMED",
                        "--add-modules=jdk.incubator.vector", "-cp", System.getProperty("java.class.path"),
                        TwoRankMlpBenchmark.class.getName(), passes);
                pb.environment().putAll(Map.of("FLEET_RANK", "" + r, "FLEET_WORLD_SIZE", "2", "FLEET_LOCAL_RANK", "" + r,
                        "FLEET_LOCAL_WORLD_SIZE", "2", "FLEET_NODE_RANK", "0", "FLEET_MASTER", "127.0.0.1:" + port,
                        "FLEET_HOST", "127.0.0.1", "FLEET_JOB_ID", job));
                pb.environment().put(JobToken.ENV, token);
                pb.redirectErrorStream(true).redirectOutput(dir.resolve("rank-" + r + ".log").toFile());
                ranks.add(pb.start());
            }
            for (int r = 0; r < 2; r++) {
                if (!ranks.get(r).waitFor(300, TimeUnit.SECONDS) || ranks.get(r).exitValue() != 0) {
                    throw new IllegalStateException("rank " + r + " failed or ran past 300 s; log: "
                            + Files.readString(dir.resolve("rank-" + r + ".log")));
                }
            }
            System.out.print(Files.readString(dir.resolve("rank-0.log")).lines().filter(l -> l.startsWith("passes"))
                    .reduce("", (x, y) -> x + y + "\n"));
        } finally {
            ranks.forEach(Process::destroyForcibly);
        }
    }

    private record Job(Program main, Executor exe, Scope scope) {
    }

    private static void rank(String passes) throws Exception {
        try (ProcessGroup g = ProcessGroups.init(GroupOptions.defaults())) {
            OpRegistry.register(OpSpec.builder(CollectiveOpTypes.ALLREDUCE).in("X").out("Out")
                    .attr("ring_id", AttrType.INT, 0).attr("reduce", AttrType.STRING, "sum")
                    .shape(c -> c.set("Out", c.dtype("X"), c.shape("X")))
                    .kernel(op -> a -> {
                        Tensor x = a.in("X");
                        g.allreduce(x.segment(), DataType.F32, ReduceOp.AVG).await(Duration.ofSeconds(60));
                        a.setOut("Out", x);
                    }).build());
            List<Job> jobs = new ArrayList<>();
            for (int k = 0; k < 2; k++) {
                Program main = new Program().setRandomSeed(1);
                Program startup = new Program().setRandomSeed(1);
                Layers nn = new Layers(main, startup);
                Var x = nn.data("x", DType.F32, -1, 784);
                Var y = nn.data("y", DType.I64, -1, 1);
                Var h = nn.fc(nn.fc(x, 512, "relu"), 512, "relu");
                List<ParamGrad> grads = Backward.appendBackward(nn.mean(nn.softmaxWithCrossEntropy(nn.fc(h, 10, null), y)));
                for (ParamGrad pg : grads) {
                    main.globalBlock().appendOp(CollectiveOpTypes.ALLREDUCE, Map.of("X", List.of(pg.grad())),
                            Map.of("Out", List.of(pg.grad())), Map.of("ring_id", 0, "reduce", "avg"));
                }
                new SGD(0.01).applyGradients(main, grads);
                Program p = main;
                if (k == 1) {
                    DistributedStrategy s = new DistributedStrategy()
                            .set(StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS, passes.contains("e"))
                            .set(StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS, passes.contains("o"))
                            .fuseAllReduceOps(passes.contains("r"));
                    p = Pipeline.forStrategy(EffectiveStrategy.resolve(s, new World(1, 2, "cpu"))).run(main).program();
                }
                Executor exe = new Executor();
                Scope scope = new Scope();
                exe.run(startup, scope);
                jobs.add(new Job(p, exe, scope));
            }
            Map<String, Tensor> feed = Map.of("x", Tensor.zeros(DType.F32, 64, 784), "y", Tensor.zeros(DType.I64, 64, 1));
            int rounds = 30;
            double[][] us = new double[2][rounds];
            for (int r = -5; r < rounds; r++) {
                for (int k = 0; k < 2; k++) {
                    Job j = jobs.get(k);
                    long t0 = System.nanoTime();
                    for (int i = 0; i < 5; i++) {
                        j.exe().run(j.main(), j.scope(), feed, List.of());
                    }
                    if (r >= 0) {
                        us[k][r] = (System.nanoTime() - t0) / 5e3;
                    }
                }
            }
            for (double[] v : us) {
                Arrays.sort(v);
            }
            if (g.rank() == 0) {
                System.out.printf(Locale.ROOT, "passes %s: uncompiled %.0f us/step, compiled %.0f us/step (medians of %d"
                        + " rounds of 5 steps), %.2fx%n", passes, us[0][rounds / 2], us[1][rounds / 2], rounds,
                        us[0][rounds / 2] / us[1][rounds / 2]);
            }
        }
    }
}
