package org.fleet4j.fleet;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.fleet4j.core.data.Batch;
import org.fleet4j.core.data.DataLoader;
import org.fleet4j.core.data.TensorDataset;
import org.fleet4j.core.drift.RoundingNoise;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.tensor.DType;

/**
 * A rank program for the checkpoint tests, run under the real launcher: trains a small classifier with Adam and a
 * step-decayed learning rate (so parameters, both moments, the beta powers and the step counter all matter) on steps
 * FIRST .. FIRST+STEPS-1 of a fixed batch sequence, optionally loading a checkpoint first and saving one after.
 * Arguments: OUT_DIR GLOBAL_BATCH FIRST STEPS LOAD_FILE|- SAVE_FILE|-. Writes every persistable to OUT_DIR/rank-N.properties.
 * With PROBE_NOISE_ULPS=N the initial parameters start N ulps away ({@link RoundingNoise}), to measure the float32 noise.
 */
public final class CheckpointProbe {
    private CheckpointProbe() {
    }

    public static void main(String[] args) throws IOException {
        Path out = Path.of(args[0]);
        int globalBatch = Integer.parseInt(args[1]);
        int first = Integer.parseInt(args[2]);
        int steps = Integer.parseInt(args[3]);
        try (Fleet fleet = Fleet.init()) {
            int rank = fleet.workerIndex();
            Program main = new Program().setRandomSeed(100);
            Program startup = new Program().setRandomSeed(100);
            Layers nn = new Layers(main, startup);
            Var x = nn.data("x", DType.F32, -1, 4);
            Var y = nn.data("label", DType.I64, -1, 1);
            Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(nn.fc(x, 6, "relu"), 3, null), y));
            fleet.distributedOptimizer(new Adam(LrSchedule.stepDecay(0.05, 4, 0.5), 0.9f, 0.999f, 1e-8f, false))
                    .minimize(loss);
            Executor exe = new Executor(ExecutorOptions.defaults(), fleet.execContext());
            Scope scope = new Scope();
            exe.run(startup, scope);
            RoundingNoise.perturbParameters(main, scope, Integer.parseInt(System.getenv().getOrDefault("PROBE_NOISE_ULPS", "0")), 1);
            if (!args[4].equals("-")) {
                fleet.loadCheckpoint(Path.of(args[4]), scope, main);
            }
            DataLoader loader = DataLoader.builder(TensorDataset.randomClassification(7, 96, 4, 3), globalBatch)
                    .shuffle(3).dropLast(true).shard(rank, fleet.workerNum()).build();
            int step = 0;
            for (int epoch = 0; step < first + steps; epoch++) {
                for (Batch b : loader.epoch(epoch)) {
                    if (step == first + steps) {
                        break;
                    }
                    if (step >= first) {
                        exe.run(main, scope, Map.of("x", b.field(0), "label", b.field(1)), List.of(loss.name()));
                    }
                    step++;
                }
            }
            if (!args[5].equals("-")) {
                fleet.saveCheckpoint(Path.of(args[5]), scope, main);
            }
            Properties result = new Properties();
            for (Var v : main.globalBlock().vars()) {
                if (v.persistable() && !v.isData()) {
                    result.setProperty(v.name(), Arrays.toString(scope.get(v.name()).toFloatArray()));
                }
            }
            StringWriter text = new StringWriter();
            result.store(text, null);
            Path file = out.resolve("rank-" + rank + ".properties");
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.writeString(tmp, text.toString());
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
        }
    }
}
