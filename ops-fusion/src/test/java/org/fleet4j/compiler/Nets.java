package org.fleet4j.compiler;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/** Small seeded training programs, and a loop that trains one and records losses and final parameters. */
final class Nets {
    private Nets() {
    }

    /** A built program: main with backward and updates, its startup, and the loss var. */
    record Net(Program main, Program startup, String loss) {
    }

    /** What a run produced: the loss of every step and every float persistable (parameters, moments, statistics) at the end. */
    record Trained(List<Float> losses, Map<String, float[]> params) {
    }

    /** An MLP 8 -> hidden... -> 3 with the given activation after every hidden layer, softmax cross-entropy loss. */
    static Net mlp(String act, int[] hidden, Function<Program, Optimizer> optimizer) {
        Program main = new Program().setRandomSeed(11);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = x;
        for (int width : hidden) {
            h = nn.fc(h, width, act);
        }
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(h, 3, null), y));
        optimizer.apply(main).minimize(loss);
        return new Net(main, startup, loss.name());
    }

    /**
     * As {@link #mlp}, with one in-place {@code c_allreduce} ("sum") per gradient between backward and the updates,
     * as the distributed optimizer inserts them.
     */
    static Net mlpWithAllreduce(String act, int[] hidden, Optimizer optimizer) {
        return mlpWithAllreduce(act, hidden, optimizer, "sum");
    }

    /** As above with the allreduces' {@code reduce} attribute ("sum" or "avg"). */
    static Net mlpWithAllreduce(String act, int[] hidden, Optimizer optimizer, String reduce) {
        StandInAllreduce.register();
        return mlpWithCollectiveAllreduce(act, hidden, optimizer, reduce);
    }

    /**
     * As {@link #mlpWithAllreduce(String, int[], Optimizer, String)} with the real {@code c_allreduce}, for the rank
     * processes whose executor's context holds their group.
     */
    static Net mlpWithCollectiveAllreduce(String act, int[] hidden, Optimizer optimizer, String reduce) {
        Program main = new Program().setRandomSeed(11);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = x;
        for (int width : hidden) {
            h = nn.fc(h, width, act);
        }
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(h, 3, null), y));
        List<ParamGrad> grads = Backward.appendBackward(loss);
        for (ParamGrad pg : grads) {
            main.globalBlock().appendOp(CollectiveOpTypes.ALLREDUCE, Map.of("X", List.of(pg.grad())),
                    Map.of("Out", List.of(pg.grad())), Map.of("ring_id", 0, "reduce", reduce));
        }
        optimizer.applyGradients(main, grads);
        return new Net(main, startup, loss.name());
    }

    /** Seeded batches of 16 samples in 8 dims with 3 classes. */
    static Map<String, Tensor> batch(int step) {
        SplittableRandom r = new SplittableRandom(1000 + step);
        float[] x = new float[16 * 8];
        long[] y = new long[16];
        for (int i = 0; i < 16; i++) {
            int c = r.nextInt(3);
            y[i] = c;
            for (int j = 0; j < 8; j++) {
                x[i * 8 + j] = (float) ((j % 3 == c ? 1.5 : 0.0) + r.nextDouble() - 0.5);
            }
        }
        Map<String, Tensor> feed = new LinkedHashMap<>();
        feed.put("x", Tensor.of(x, 16, 8));
        feed.put("y", Tensor.ofLongs(y, 16, 1));
        return feed;
    }

    static Trained train(Program main, Program startup, String loss, int steps) {
        return train(main, startup, loss, steps, ExecutorOptions.defaults());
    }

    /** {@code steps} steps on batches 0, 1, ... with an executor of {@code options}: the losses and float parameters. */
    static Trained train(Program main, Program startup, String loss, int steps, ExecutorOptions options) {
        return train(main, startup, loss, steps, options, ExecContext.none());
    }

    /** As {@link #train(Program, Program, String, int, ExecutorOptions)}, the kernels made with {@code context}. */
    static Trained train(Program main, Program startup, String loss, int steps, ExecutorOptions options,
                         ExecContext context) {
        try (Executor exe = new Executor(options, context)) {
            Scope scope = new Scope();
            exe.run(startup, scope);
            List<Float> losses = new ArrayList<>();
            for (int s = 0; s < steps; s++) {
                losses.add(exe.run(main, scope, batch(s), List.of(loss)).get(loss).getFloat(0));
            }
            return new Trained(losses, floatPersistables(main, scope));
        }
    }

    /** Every float persistable of {@code main} in {@code scope}, by name, in program order. */
    static Map<String, float[]> floatPersistables(Program main, Scope scope) {
        Map<String, float[]> values = new LinkedHashMap<>();
        for (Var v : main.globalBlock().vars()) {
            if (v.persistable() && v.dtype() == DType.F32) {
                values.put(v.name(), scope.get(v.name()).toFloatArray());
            }
        }
        return values;
    }

    /** One line "name=v,v,... name=v,..." of {@link #floatPersistables}, each value exact; read back by {@link #parseValues}. */
    static String valuesLine(Program main, Scope scope) {
        List<String> entries = new ArrayList<>();
        floatPersistables(main, scope).forEach((name, values) -> {
            List<String> cells = new ArrayList<>();
            for (float f : values) {
                cells.add(Float.toString(f));
            }
            entries.add(name + "=" + String.join(",", cells));
        });
        return String.join(" ", entries);
    }

    static Map<String, float[]> parseValues(String line) {
        Map<String, float[]> out = new LinkedHashMap<>();
        for (String entry : line.trim().split(" ")) {
            int eq = entry.lastIndexOf('=');
            String[] cells = entry.substring(eq + 1).split(",");
            float[] values = new float[cells.length];
            for (int i = 0; i < cells.length; i++) {
                values[i] = Float.parseFloat(cells[i]);
            }
            out.put(entry.substring(0, eq), values);
        }
        return out;
    }

    static List<String> opTypes(Program p) {
        return p.globalBlock().ops().stream().map(Op::type).toList();
    }

    static long count(Program p, String type) {
        return opTypes(p).stream().filter(type::equals).count();
    }
}
