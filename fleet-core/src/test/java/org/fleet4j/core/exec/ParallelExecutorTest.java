package org.fleet4j.core.exec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** The dependency-driven executor gives the results of program order, on many threads, run after run. */
class ParallelExecutorTest {
    private static final ExecutorOptions FOUR = ExecutorOptions.defaults().withNumThreads(4);

    private record Net(Program main, Program startup, Var loss) {
    }

    /** An MLP with two towers on the same input (independent branches), so several threads have work at once. */
    private static Net twoTowers(Optimizer opt) {
        Program main = new Program().setRandomSeed(3);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var a = nn.fc(nn.fc(x, 16, "relu"), 3, null);
        Var b = nn.fc(nn.fc(nn.reshape(x, -1, 8), 12, "tanh"), 3, null);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.add(a, b), y));
        opt.minimize(loss);
        return new Net(main, startup, loss);
    }

    private static Map<String, Tensor> batch(int step) {
        SplittableRandom r = new SplittableRandom(100 + step);
        Tensor x = Tensor.zeros(16, 8);
        Tensor y = Tensor.zeros(DType.I64, 16, 1);
        for (long i = 0; i < x.numel(); i++) {
            x.setFloat(i, (float) r.nextDouble(-1, 1));
        }
        for (long i = 0; i < 16; i++) {
            y.setLong(i, r.nextInt(3));
        }
        return Map.of("x", x, "y", y);
    }

    /** Losses of every step, then every float persistable at the end. */
    private static List<Float> train(Net net, ExecutorOptions options, int steps) {
        List<Float> out = new ArrayList<>();
        try (Executor exe = new Executor(options)) {
            Scope scope = new Scope();
            exe.run(net.startup(), scope);
            for (int s = 0; s < steps; s++) {
                out.add(exe.run(net.main(), scope, batch(s), List.of(net.loss().name())).get(net.loss().name()).getFloat(0));
            }
            for (Var v : net.main().globalBlock().vars()) {
                if (v.persistable() && v.dtype() == DType.F32) {
                    for (float f : scope.get(v.name()).toFloatArray()) {
                        out.add(f);
                    }
                }
            }
        }
        return out;
    }

    @Test
    void trainingOnFourThreadsEqualsProgramOrderExactly() {
        List<Supplier<Optimizer>> optimizers = List.of(() -> new SGD(0.3), () -> new Momentum(0.1, 0.9f), () -> new Adam(0.01));
        for (Supplier<Optimizer> opt : optimizers) {
            String name = opt.get().name();
            List<Float> sequential = train(twoTowers(opt.get()), ExecutorOptions.defaults(), 12);
            assertEquals(sequential, train(twoTowers(opt.get()), FOUR, 12), name + ", 4 threads");
            assertEquals(sequential, train(twoTowers(opt.get()), FOUR.withBackwardOptimizerOpDeps(false), 12),
                    name + ", 4 threads, updates ordered by data only");
            assertEquals(sequential, train(twoTowers(opt.get()), FOUR.withSequentialExecution(true), 12),
                    name + ", 4 threads, sequential execution");
        }
    }

    /**
     * 48 independent chains of 10 in-place ops each (x = x * 1.5 + k, order-sensitive), plus a sum that reads every
     * chain: 200 runs on 4 threads give exactly the values of program order every time.
     */
    @Test
    void manyIndependentInPlaceChainsStayDeterministicOverManyRuns() {
        Program main = new Program();
        Layers nn = new Layers(main, new Program());
        List<Var> ends = new ArrayList<>();
        for (int c = 0; c < 48; c++) {
            Var v = nn.data("x" + c, DType.F32, 64);
            Var t = nn.scale(v, 1f, 0f);
            for (int k = 0; k < 10; k++) {
                main.globalBlock().appendOp("scale", Map.of("X", List.of(t.name())), Map.of("Out", List.of(t.name())),
                        Map.of("scale", 1.5f, "bias", (float) (k + c)));
            }
            ends.add(t);
        }
        Var total = nn.sum(ends);
        Map<String, Tensor> feed = new HashMap<>();
        SplittableRandom r = new SplittableRandom(5);
        for (int c = 0; c < 48; c++) {
            Tensor x = Tensor.zeros(64);
            for (int i = 0; i < 64; i++) {
                x.setFloat(i, (float) r.nextDouble());
            }
            feed.put("x" + c, x);
        }
        List<String> fetch = List.of(total.name(), ends.get(17).name());
        Map<String, Tensor> expected;
        try (Executor one = new Executor()) {
            expected = one.run(main, new Scope(), feed, fetch);
        }
        Set<String> threads = ConcurrentHashMap.newKeySet();
        try (Executor exe = new Executor(FOUR)) {
            exe.addObserver(new Executor.OpObserver() {
                @Override
                public void opStarted(int index, String type) {
                    threads.add(Thread.currentThread().getName());
                }

                @Override
                public void opFinished(int index, String type) {
                }
            });
            for (int run = 0; run < 200; run++) {
                Map<String, Tensor> got = exe.run(main, new Scope(), feed, fetch);
                for (String f : fetch) {
                    assertArrayEquals(expected.get(f).toFloatArray(), got.get(f).toFloatArray(), "run " + run + ", " + f);
                }
            }
        }
        assertTrue(threads.size() > 1, "ops ran on several threads: " + threads);
    }

    @Test
    void aFailingOpOnAnyThreadIsReportedByNameAndTheExecutorRunsOnAfterwards() {
        Program main = new Program();
        Layers nn = new Layers(main, new Program());
        Var x = nn.data("x", DType.F32, -1, 4);
        Var w = nn.data("w", DType.F32, -1, 2);
        List<Var> branches = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            branches.add(nn.matmul(nn.scale(x, 2f, 0f), w));
        }
        Var out = nn.sum(branches);
        try (Executor exe = new Executor(FOUR)) {
            Map<String, Tensor> good = Map.of("x", Tensor.zeros(3, 4), "w", Tensor.zeros(4, 2));
            exe.run(main, new Scope(), good, List.of(out.name()));
            exe.run(main, new Scope(), good, List.of(out.name()));
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> exe.run(main, new Scope(), Map.of("x", Tensor.zeros(3, 4), "w", Tensor.zeros(3, 2)), List.of()));
            assertTrue(e.getMessage().contains("matmul") && e.getMessage().startsWith("op #"), e.getMessage());
            assertEquals(2, exe.run(main, new Scope(), Map.of("x", Tensor.of(new float[]{1, 1, 1, 1}, 1, 4),
                    "w", Tensor.of(new float[]{1, 0, 0, 0, 0, 0, 0, 0}, 4, 2)), List.of(out.name())).get(out.name()).numel());
        }
    }

    @Test
    void optionsRejectNonsenseNamingTheSetting() {
        assertEquals("executor numThreads must be at least 1, is 0",
                assertThrows(IllegalArgumentException.class, () -> ExecutorOptions.defaults().withNumThreads(0)).getMessage());
        assertEquals("executor iterationsPerRun must be at least 1, is 0",
                assertThrows(IllegalArgumentException.class, () -> ExecutorOptions.defaults().withIterationsPerRun(0)).getMessage());
        assertEquals("executor iterationsPerDropScope must be 0 (never) or more, is -1",
                assertThrows(IllegalArgumentException.class, () -> ExecutorOptions.defaults().withIterationsPerDropScope(-1))
                        .getMessage());
    }
}
