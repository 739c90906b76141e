package org.fleet4j.fleet;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;

/**
 * A rank program for {@link IterationsPerRunTest}, run under the real launcher: Fleet.init with the strategy file
 * STRATEGY (which sets execution_strategy.num_iteration_per_run to N), then the same MLP from the same start trained
 * three ways on this rank's share of each call's batch: {@code per_run} through {@link ExecutionSettings#executor}
 * (each of CALLS calls runs N iterations on its batch), {@code single} with N single-iteration calls per batch, and
 * {@code once} with one single-iteration call per batch. Writes each run's fetched losses (per call; the last
 * iteration's) and final parameters (float bits) to OUT_DIR/rank-R.properties. Arguments: OUT_DIR STRATEGY CALLS.
 */
public final class IterationsPerRunProbe {
    private IterationsPerRunProbe() {
    }

    public static void main(String[] args) throws IOException {
        Path out = Path.of(args[0]);
        int calls = Integer.parseInt(args[2]);
        Properties result = new Properties();
        try (Fleet fleet = Fleet.init(DistributedStrategy.load(Path.of(args[1])))) {
            int perRun;
            try (Executor exe = ExecutionSettings.executor(fleet)) {
                perRun = exe.options().iterationsPerRun();
                train("per_run", fleet, exe, calls, 1, result);
            }
            try (Executor exe = new Executor(ExecutionSettings.of(fleet.strategy()).withIterationsPerRun(1),
                    fleet.execContext())) {
                train("single", fleet, exe, calls, perRun, result);
            }
            try (Executor exe = new Executor(ExecutionSettings.of(fleet.strategy()).withIterationsPerRun(1),
                    fleet.execContext())) {
                train("once", fleet, exe, calls, 1, result);
            }
            result.setProperty("iterations_per_run", "" + perRun);
        }
        StringWriter w = new StringWriter();
        result.store(w, null);
        Files.writeString(out.resolve("rank-" + System.getenv("FLEET_RANK") + ".properties"), w.toString());
    }

    /** CALLS batches, each run by {@code repeat} calls of {@code exe}; the loss of each batch's last call is kept. */
    private static void train(String name, Fleet fleet, Executor exe, int calls, int repeat, Properties result) {
        Program main = new Program().setRandomSeed(23);
        Program startup = new Program().setRandomSeed(23);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 10);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(nn.fc(x, 24, "relu"), 4, null), y));
        fleet.distributedOptimizer(new Momentum(0.05, 0.9f)).minimize(loss);
        Scope scope = new Scope();
        exe.run(startup, scope);
        List<Float> losses = new ArrayList<>();
        for (int call = 0; call < calls; call++) {
            Map<String, Tensor> feed = SeededShards.shard(700 + call, fleet.workerIndex(), fleet.workerNum());
            float last = Float.NaN;
            for (int i = 0; i < repeat; i++) {
                last = exe.run(main, scope, feed, List.of(loss.name())).get(loss.name()).getFloat(0);
            }
            losses.add(last);
        }
        StringBuilder params = new StringBuilder();
        for (Var v : main.globalBlock().vars()) {
            if (v.isParameter()) {
                for (float f : scope.get(v.name()).toFloatArray()) {
                    params.append(Float.floatToIntBits(f)).append(' ');
                }
            }
        }
        result.setProperty(name + ".losses", losses.toString());
        result.setProperty(name + ".params", params.toString().trim());
    }
}
