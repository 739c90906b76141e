package org.fleet4j.core.exec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * One process, no collectives: a training step on 1 executor thread against 2 (and 2 without the update deps),
 * taking turns 10 steps at a time; prints the median step of each. Two networks: mlp_perf's (784-512-512-10, batch
 * 64: a chain, nothing to run side by side) and four such towers of 256 on one input (four independent branches).
 * Not a unit test.
 * <pre>
 * ParallelExecutorBenchmark ROUNDS
 * </pre>
 */
public final class ParallelExecutorBenchmark {
    private static final int ROUND = 10;

    private ParallelExecutorBenchmark() {
    }

    private record Net(Program main, Program startup, Var loss) {
    }

    private static Net build(int towers, int width) {
        Program main = new Program().setRandomSeed(1);
        Program startup = new Program().setRandomSeed(1);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 784);
        Var y = nn.data("y", DType.I64, -1, 1);
        List<Var> logits = new ArrayList<>();
        for (int t = 0; t < towers; t++) {
            logits.add(nn.fc(nn.fc(nn.fc(x, width, "relu"), width, "relu"), 10, null));
        }
        Var sum = towers == 1 ? logits.getFirst() : nn.sum(logits);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(sum, y));
        new SGD(0.01).minimize(loss);
        return new Net(main, startup, loss);
    }

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        SplittableRandom r = new SplittableRandom(1);
        Tensor x = Tensor.zeros(64, 784);
        Tensor y = Tensor.zeros(DType.I64, 64, 1);
        for (long i = 0; i < x.numel(); i++) {
            x.setFloat(i, (float) r.nextDouble());
        }
        for (long i = 0; i < 64; i++) {
            y.setLong(i, r.nextInt(10));
        }
        Map<String, Tensor> feed = Map.of("x", x, "y", y);
        List<ExecutorOptions> variants = List.of(ExecutorOptions.defaults(), ExecutorOptions.defaults().withNumThreads(2),
                ExecutorOptions.defaults().withNumThreads(2).withBackwardOptimizerOpDeps(false));
        for (int[] shape : new int[][]{{1, 512}, {4, 256}}) {
            double[][] us = new double[variants.size()][rounds * ROUND];
            List<Executor> executors = new ArrayList<>();
            List<Net> nets = new ArrayList<>();
            List<Scope> scopes = new ArrayList<>();
            for (ExecutorOptions o : variants) {
                Net net = build(shape[0], shape[1]);
                Executor exe = new Executor(o);
                Scope scope = new Scope();
                exe.run(net.startup(), scope);
                for (int i = 0; i < 30; i++) {
                    exe.run(net.main(), scope, feed, List.of(net.loss().name()));
                }
                executors.add(exe);
                nets.add(net);
                scopes.add(scope);
            }
            for (int round = 0; round < rounds; round++) {
                for (int k = 0; k < variants.size(); k++) {
                    for (int i = 0; i < ROUND; i++) {
                        long s = System.nanoTime();
                        executors.get(k).run(nets.get(k).main(), scopes.get(k), feed, List.of(nets.get(k).loss().name()));
                        us[k][round * ROUND + i] = (System.nanoTime() - s) / 1e3;
                    }
                }
            }
            double base = median(us[0]);
            for (int k = 0; k < variants.size(); k++) {
                ExecutorOptions o = variants.get(k);
                System.out.printf(Locale.ROOT, "%d tower(s) of %d: %d thread(s)%s: %.0f us/step (median of %d), %.2fx one thread's time%n",
                        shape[0], shape[1], o.numThreads(), o.numThreads() > 1 && !o.backwardOptimizerOpDeps()
                                ? ", updates by data only" : "", median(us[k]), us[k].length, median(us[k]) / base);
            }
            executors.forEach(Executor::close);
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
