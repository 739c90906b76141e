package org.fleet4j.fleet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.fleet4j.compiler.Compilation;
import org.fleet4j.compiler.Pipeline;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.drift.RoundingNoise;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;

/**
 * A rank program for {@link CompilerKnobsFleetTest}: Fleet.init with the strategy of FLEET_STRATEGY (so the rings it
 * asks for are opened), then the same seeded network trained twice on this rank's share of every 16-sample batch:
 * compiled with that strategy, and as the reference uncompiled with one flat allreduce per gradient on ring 0.
 * Writes both runs' losses and parameters, one line each, then the compiled program's ops, then the reference again
 * started PROBE_NOISE_ULPS (default 1) ulps away ({@link RoundingNoise}, the noise it is judged by), to
 * OUT_DIR/rank-R.values. Arguments: OUT_DIR STEPS NET, NET
 * "mlp" (through fleet.distributedOptimizer) or "aux" (a classifier with an auxiliary head that counts on every
 * other step, rank by rank; compiled, its gradient ops run in a conditional region that this rank skips on the other
 * steps, the reference multiplies its loss by zero there).
 */
public final class CompilerKnobsProbe {
    private static final int BATCH = 16;

    private CompilerKnobsProbe() {
    }

    public static void main(String[] args) throws IOException {
        Path out = Path.of(args[0]);
        int steps = Integer.parseInt(args[1]);
        boolean aux = args[2].equals("aux");
        int noiseUlps = Integer.parseInt(System.getenv().getOrDefault("PROBE_NOISE_ULPS", "1"));
        try (Fleet fleet = Fleet.init()) {
            Net compiled;
            Net reference;
            if (aux) {
                compiled = auxNet(fleet, true);
                reference = auxNet(fleet, false);
            } else {
                compiled = mlp();
                fleet.distributedOptimizer(new Momentum(0.05, 0.9f)).minimize(compiled.loss);
                reference = mlp();
                fleet.distributedOptimizer(new Momentum(0.05, 0.9f), new DistributedStrategy().fuseAllReduceOps(false))
                        .minimize(reference.loss);
            }
            String text = train(reference, fleet, steps, 0) + "\n" + train(compiled, fleet, steps, 0) + "\n"
                    + ops(compiled.main) + "\n" + train(reference, fleet, steps, noiseUlps) + "\n";
            Path tmp = out.resolve("rank-" + fleet.workerIndex() + ".tmp");
            Files.writeString(tmp, text);
            Files.move(tmp, out.resolve("rank-" + fleet.workerIndex() + ".values"), StandardCopyOption.ATOMIC_MOVE);
        }
    }

    private record Net(Program main, Program startup, Var loss) {
    }

    /** x [-1, 8] -> fc 16 relu -> fc 12 relu -> fc 3 -> softmax cross-entropy; the same seeds on every rank. */
    private static Net mlp() {
        Program main = new Program().setRandomSeed(31);
        Program startup = new Program().setRandomSeed(31);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var logits = nn.fc(nn.fc(nn.fc(x, 16, "relu"), 12, "relu"), 3, null);
        return new Net(main, startup, nn.mean(nn.softmaxWithCrossEntropy(logits, y)));
    }

    /**
     * The classifier plus an auxiliary head fc_2 whose loss is multiplied by the fed {@code aux_on}; with
     * {@code conditional} its two gradient ops run between conditional_begin(use_aux) and conditional_end. Gradients
     * are averaged on ring 0 (as the distributed optimizer does) and the program compiled with Fleet's strategy.
     */
    private static Net auxNet(Fleet fleet, boolean conditional) {
        Program main = new Program().setRandomSeed(41);
        Program startup = new Program().setRandomSeed(41);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var auxOn = nn.data("aux_on", DType.F32, 1);
        Var useAux = nn.data("use_aux", DType.I64, 1);
        Var ce = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(nn.fc(x, 12, "relu"), 3, null), y));
        Var loss = nn.add(ce, nn.mul(nn.mean(nn.fc(x, 1, null)), auxOn));
        List<ParamGrad> grads = Backward.appendBackward(loss);
        if (conditional) {
            List<Op> ops = main.globalBlock().ops();
            int first = Integer.MAX_VALUE;
            int last = -1;
            for (int i = 0; i < ops.size(); i++) {
                if (ops.get(i).allOutputs().contains("fc_2.w_0@GRAD") || ops.get(i).allOutputs().contains("fc_2.b_0@GRAD")) {
                    first = Math.min(first, i);
                    last = i;
                }
            }
            main.globalBlock().insertOp(last + 1, "conditional_end", Map.of(), Map.of(), Map.of());
            main.globalBlock().insertOp(first, "conditional_begin", Map.of("Cond", List.of(useAux.name())), Map.of(),
                    Map.of());
        }
        for (ParamGrad pg : grads) {
            main.globalBlock().appendOp("c_allreduce", Map.of("X", List.of(pg.grad())), Map.of("Out", List.of(pg.grad())),
                    Map.of("ring_id", Fleet.DEFAULT_RING, "reduce", "avg"));
        }
        new Momentum(0.05, 0.9f).applyGradients(main, grads);
        if (conditional) {
            Compilation c = Pipeline.forStrategy(fleet.strategy()).runInPlace(main);
            System.out.print(c.describe());
        }
        return new Net(main, startup, loss);
    }

    /** "LOSS LOSS ... | name=v,v,... name=v,...": the loss of every step, then every parameter at the end. */
    private static String train(Net net, Fleet fleet, int steps, int ulps) {
        Executor exe = new Executor(ExecutorOptions.defaults(), fleet.execContext());
        Scope scope = new Scope();
        exe.run(net.startup, scope);
        RoundingNoise.perturbParameters(net.main, scope, ulps, 1);
        int share = BATCH / fleet.workerNum();
        int rank = fleet.workerIndex();
        List<String> values = new ArrayList<>();
        for (int step = 0; step < steps; step++) {
            Map<String, Tensor> feed = batch(step, rank * share, share);
            if (net.main.globalBlock().hasVar("aux_on")) {
                int on = (step + rank) % 2;
                feed.put("aux_on", Tensor.of(new float[]{on}, 1));
                feed.put("use_aux", Tensor.ofLongs(new long[]{on}, 1));
            }
            float loss = exe.run(net.main, scope, feed, List.of(net.loss.name())).get(net.loss.name()).getFloat(0);
            values.add(Float.toString(loss));
        }
        values.add("|");
        for (Var v : net.main.globalBlock().vars()) {
            if (v.isParameter()) {
                List<String> cells = new ArrayList<>();
                for (float f : scope.get(v.name()).toFloatArray()) {
                    cells.add(Float.toString(f));
                }
                values.add(v.name() + "=" + String.join(",", cells));
            }
        }
        return String.join(" ", values);
    }

    /** Rows [from, from + rows) of the seeded 16-sample batch of this step: 8 features, 3 classes. */
    private static Map<String, Tensor> batch(int step, int from, int rows) {
        SplittableRandom r = new SplittableRandom(500 + step);
        float[] x = new float[BATCH * 8];
        long[] y = new long[BATCH];
        for (int i = 0; i < BATCH; i++) {
            int c = r.nextInt(3);
            y[i] = c;
            for (int j = 0; j < 8; j++) {
                x[i * 8 + j] = (float) ((j % 3 == c ? 1.5 : 0.0) + r.nextDouble() - 0.5);
            }
        }
        Map<String, Tensor> feed = new LinkedHashMap<>();
        feed.put("x", Tensor.of(x, BATCH, 8).rows(from, from + rows));
        feed.put("y", Tensor.ofLongs(y, BATCH, 1).rows(from, from + rows));
        return feed;
    }

    private static String ops(Program p) {
        return String.join(",", p.globalBlock().ops().stream().map(o -> o.type() + (o.attrs().containsKey("ring_id")
                ? "@" + o.intAttr("ring_id") : "")).toList());
    }
}
