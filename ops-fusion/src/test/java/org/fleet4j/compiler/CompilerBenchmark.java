package org.fleet4j.compiler;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Initializer;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Fused against unfused programs on the Executor, timed side by side: each round runs every variant for the same
 * number of steps, in turn, and the medians over rounds are compared. Not a unit test (surefire does not run it).
 * <pre>
 * CompilerBenchmark [rounds]
 * </pre>
 */
public final class CompilerBenchmark {
    private CompilerBenchmark() {
    }

    /** One program with its feed, run in its own scope. */
    private record Variant(String name, Program program, Scope scope, Executor exe, Map<String, Tensor> feed) {
        void step() {
            exe.run(program, scope, feed, List.of());
        }
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 21;
        System.out.println("java " + Runtime.version() + ", " + Runtime.getRuntime().availableProcessors() + " cpus, "
                + rounds + " rounds");
        addRelu(rounds, false);
        addRelu(rounds, true);
        optimizer(rounds, "sgd");
        optimizer(rounds, "adam");
        mlp(rounds);
        inplaceMemory();
    }

    /** Working memory held by the executor for mlp_perf's training step, without and with enable_inplace. */
    private static void inplaceMemory() {
        Program main = new Program().setRandomSeed(1);
        Program startup = new Program().setRandomSeed(1);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 784);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = nn.fc(nn.fc(x, 512, "relu"), 512, "relu");
        new org.fleet4j.core.optim.SGD(0.01).minimize(nn.mean(nn.softmaxWithCrossEntropy(nn.fc(h, 10, null), y)));
        Program reused = new InplacePass().apply(main).program();
        Tensor labels = Tensor.zeros(DType.I64, 64, 1);
        Map<String, Tensor> feed = Map.of("x", random(3, 64, 784), "y", labels);
        System.out.println("\nmlp_perf's training step (784-512-512-10, batch 64): temporaries the executor holds");
        for (Program p : List.of(main, reused)) {
            Variant v = variant(p == main ? "without enable_inplace" : "with enable_inplace", p, startup, feed);
            v.step();
            System.out.printf(Locale.ROOT, "  %-50s %,d bytes%n", v.name(), v.exe().temporaryBytes(p));
        }
    }

    /** A training step of mlp_perf's network (784-512-512-10, batch 64, SGD) with both op fusions against none. */
    private static void mlp(int rounds) {
        Program main = new Program().setRandomSeed(1);
        Program startup = new Program().setRandomSeed(1);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 784);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = nn.fc(nn.fc(x, 512, "relu"), 512, "relu");
        new org.fleet4j.core.optim.SGD(0.01).minimize(nn.mean(nn.softmaxWithCrossEntropy(nn.fc(h, 10, null), y)));
        Program fused = Pipeline.of(new FuseElewiseAddActPass(), new FuseAllOptimizerPass()).run(main).program();
        Tensor labels = Tensor.zeros(DType.I64, 64, 1);
        for (int i = 0; i < 64; i++) {
            labels.setLong(i, i % 10);
        }
        Map<String, Tensor> feed = Map.of("x", random(3, 64, 784), "y", labels);
        compare("mlp_perf's training step, 784-512-512-10, batch 64, SGD, one rank", rounds, 10,
                variant("no fusion", main, startup, feed),
                variant("fuse_elewise_add_act_ops + fuse_all_optimizer_ops", fused, startup, feed));
    }

    private static Tensor random(long seed, long... shape) {
        SplittableRandom r = new SplittableRandom(seed);
        Tensor t = Tensor.zeros(DType.F32, shape);
        for (long i = 0; i < t.numel(); i++) {
            t.setFloat(i, (float) (r.nextDouble() * 2 - 1));
        }
        return t;
    }

    /** relu(x + b) over a 16 MB activation x [4096, 1024] with a bias b [1024]; with backward when asked. */
    private static void addRelu(int rounds, boolean backward) {
        Program main = new Program().setRandomSeed(1);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, 4096, 1024);
        Var b = nn.createParameter("b", DType.F32, new long[]{1024}, Initializer.constant(0.01f));
        Var out = nn.relu(nn.add(x, b));
        if (backward) {
            Backward.appendBackward(nn.mean(out));
        }
        Program fused = new FuseElewiseAddActPass().apply(main).program();
        Map<String, Tensor> feed = Map.of("x", random(7, 4096, 1024));
        compare((backward ? "elementwise_add + relu, forward and backward" : "elementwise_add + relu, forward")
                        + ", x 16 MB [4096, 1024]", rounds, 10,
                variant("unfused", main, startup, feed), variant("fused", fused, startup, feed));
    }

    /** 100 parameters of 64K floats each (25 MB), one update op each against one fused op. */
    private static void optimizer(int rounds, String type) {
        Program main = new Program().setRandomSeed(1);
        Program startup = new Program();
        Block block = main.globalBlock();
        Layers nn = new Layers(main, startup);
        Var lr = nn.createPersistable("lr", DType.F32, new long[]{1}, 0.001f);
        Map<String, Tensor> feed = new LinkedHashMap<>();
        for (int i = 0; i < 100; i++) {
            Var p = nn.createParameter("p" + i, DType.F32, new long[]{65536}, Initializer.constant(0.5f));
            Var g = nn.data("g" + i, DType.F32, 65536);
            feed.put(g.name(), random(i, 65536));
            Map<String, List<String>> in = new LinkedHashMap<>(Map.of("Param", List.of(p.name()), "Grad", List.of(g.name()),
                    "LearningRate", List.of(lr.name())));
            Map<String, List<String>> out = new LinkedHashMap<>(Map.of("ParamOut", List.of(p.name())));
            if (type.equals("adam")) {
                for (String m : List.of("Moment1", "Moment2")) {
                    Var v = nn.createPersistable(p.name() + "_" + m, DType.F32, new long[]{65536}, 0f);
                    in.put(m, List.of(v.name()));
                    out.put(m + "Out", List.of(v.name()));
                }
                for (String[] pow : new String[][]{{"Beta1Pow", "0.9"}, {"Beta2Pow", "0.999"}}) {
                    Var v = nn.createPersistable(p.name() + "_" + pow[0], DType.F32, new long[]{1}, Float.parseFloat(pow[1]));
                    in.put(pow[0], List.of(v.name()));
                    out.put(pow[0] + "Out", List.of(v.name()));
                }
            }
            block.appendOp(type, in, out, Map.of());
        }
        Program fused = new FuseAllOptimizerPass().apply(main).program();
        compare(type + ": 100 parameters x 64K floats (25 MB of parameters)", rounds, 10,
                variant("one op per parameter", main, startup, feed), variant("fused", fused, startup, feed));
    }

    private static Variant variant(String name, Program main, Program startup, Map<String, Tensor> feed) {
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(startup, scope);
        return new Variant(name, main, scope, exe, feed);
    }

    /** Warms every variant up, then per round times {@code steps} steps of each in turn; prints medians and ratios. */
    private static void compare(String title, int rounds, int steps, Variant... variants) {
        for (Variant v : variants) {
            for (int i = 0; i < 3 * steps; i++) {
                v.step();
            }
        }
        List<double[]> perStepUs = new ArrayList<>();
        for (Variant v : variants) {
            perStepUs.add(new double[rounds]);
        }
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < variants.length; k++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < steps; i++) {
                    variants[k].step();
                }
                perStepUs.get(k)[r] = (System.nanoTime() - t0) / 1e3 / steps;
            }
        }
        System.out.println("\n" + title);
        double base = median(perStepUs.getFirst());
        for (int k = 0; k < variants.length; k++) {
            double m = median(perStepUs.get(k));
            System.out.printf(Locale.ROOT, "  %-50s median %10.1f us/step   %.2fx the first%n", variants[k].name(), m, base / m);
        }
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
