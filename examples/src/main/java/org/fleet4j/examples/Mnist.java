package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.data.Batch;
import org.fleet4j.core.data.DataLoader;
import org.fleet4j.core.data.MnistDataset;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.LoadOptions;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.models.Mlp;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.fleet.InferenceModel;
import org.fleet4j.fleet.Timeline;
import org.fleet4j.fleet.cli.LogLevelOption;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.cli.TensorBoardOption;
import org.fleet4j.fleet.metrics.LossCurve;
import org.fleet4j.fleet.metrics.ProgressBar;
import org.fleet4j.fleet.metrics.StepMetrics;
import org.fleet4j.fleet.metrics.Summary;
import org.fleet4j.fleet.onnx.OnnxExporter;
import org.fleet4j.launch.NamedProgram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The built-in {@code mnist} program: an MLP 784-512-512-10 trained on MNIST digits, then tested. Under fleetrun with
 * N ranks each rank trains on its 1/N of every global batch with averaged gradients; rank 0 tests and writes results.
 */
@AutoService(NamedProgram.class)
@Command(name = "mnist", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Trains an MLP (784-512-512-10, ReLU) on MNIST and reports test accuracy.")
public final class Mnist implements Callable<Integer>, NamedProgram {
    @Override
    public String programName() {
        return "mnist";
    }

    @Mixin
    TrainingOptions training = new TrainingOptions(2, 64, "momentum", 0.05);
    @Option(names = "--steps", description = "total training steps; overrides --epochs")
    Integer steps;
    @Option(names = "--global_batch", description = "samples per step over all ranks, split between them")
    Integer globalBatch;
    @Mixin
    SeedOption seed;
    @Option(names = "--freeze", description = "parameters whose names match this regular expression keep their initial values (e.g. 'fc_0\\..*' keeps the first layer)")
    String freeze;
    @Option(names = "--perturb_init_ulps", description = "move every initial weight this many float32 ulps up or down (seeded), to measure how far rounding alone carries a training (default ${DEFAULT-VALUE})")
    int perturbInitUlps = 0;
    @Option(names = "--data_dir", description = "folder with the four MNIST IDX files (default: the bundled digits)")
    Path dataDir;
    @Mixin
    LogDirOption logDir;
    @Mixin
    CheckpointOptions checkpoint;
    @Option(names = "--allow_nonfinite_checkpoint", description = "load a --load_checkpoint that holds NaN or infinite values"
            + " (refused by default), to inspect a training that diverged")
    boolean allowNonfiniteCheckpoint;
    @Option(names = "--export_onnx", description = "after training, write the inference model (image in; logits and"
            + " probabilities out) as an ONNX file for ONNX Runtime")
    Path exportOnnx;
    @Option(names = "--timeline", description = "write a Chrome trace of the training steps; rank N writes FILE with .rankN before the extension")
    Path timelineFile;
    @Mixin
    TensorBoardOption tensorboard;
    @Mixin
    LogLevelOption logLevel;

    public static void main(String[] args) {
        System.exit(ProgramMain.run("mnist", new Mnist(), args));
    }

    @Override
    public Integer call() throws Exception {
        if (training.batchSize() < 1 || (globalBatch != null && globalBatch < 1)) {
            throw new IllegalArgumentException("--batch_size and --global_batch must be at least 1");
        }
        if (training.epochs() < 1 && steps == null) {
            throw new IllegalArgumentException("--epochs must be at least 1, got " + training.epochs());
        }
        if (perturbInitUlps < 0) {
            throw new IllegalArgumentException("--perturb_init_ulps must be 0 or more, got " + perturbInitUlps);
        }
        if (steps != null && steps < 1) {
            throw new IllegalArgumentException("--steps must be at least 1, got " + steps);
        }
        try (Fleet fleet = Fleet.init()) {
            return train(fleet, Rank.of(fleet, logDir.folder()));
        }
    }

    private int train(Fleet fleet, Rank rank) throws Exception {
        int global = globalBatch != null ? globalBatch : training.batchSize() * rank.worldSize();
        if (global % rank.worldSize() != 0) {
            // the averaged gradient weights every rank alike, which equals the global batch's gradient only for equal shares
            throw new IllegalArgumentException("--global_batch " + global + " does not split evenly over "
                    + rank.worldSize() + " ranks; use a multiple of " + rank.worldSize());
        }
        if (checkpoint.save() != null) {
            fleet.checkCheckpointWritable(checkpoint.save());
        }
        if (exportOnnx != null) {
            try {
                OnnxExporter.checkWritable(exportOnnx);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--export_onnx: " + e.getMessage(), e);
            }
        }
        PrintStream out = System.out;
        MnistDataset train = dataDir == null ? MnistDataset.bundled(MnistDataset.Split.TRAIN)
                : MnistDataset.load(dataDir, MnistDataset.Split.TRAIN);
        MnistDataset test = dataDir == null ? MnistDataset.bundled(MnistDataset.Split.TEST)
                : MnistDataset.load(dataDir, MnistDataset.Split.TEST);
        out.println(Blas.get().description());
        out.printf(Locale.ROOT, "mnist: %d training and %d test digits; MLP 784-512-512-10; %s lr %s; global batch %d over %d %s%n",
                train.size(), test.size(), training.optimizer(), training.lr(), global, rank.worldSize(), rank.worldSize() == 1 ? "rank" : "ranks");

        Mlp net = Mlp.build(new int[]{784, 512, 512, 10}, seed.seed());
        Optimizer opt = Training.optimizer(training.optimizer(), training.lr());
        if (freeze != null) {
            out.println("mnist: --freeze keeps " + Training.freeze(net.main(), freeze) + " at their initial values");
        }
        fleet.distributedOptimizer(opt).minimize(net.loss());
        try (ProgramRunner runner = Training.runner(out, "mnist", fleet);
             StepMetrics metrics = tensorboard.open(rank.rank(), runner).learningRate(opt.schedule())) {
            return train(fleet, rank, runner, metrics, net, opt, train, test, global);
        }
    }

    private int train(Fleet fleet, Rank rank, ProgramRunner exe, StepMetrics metrics, Mlp net, Optimizer opt,
                      MnistDataset train, MnistDataset test, int global) throws Exception {
        PrintStream out = System.out;
        Scope scope = new Scope();
        exe.run(net.startup(), scope);
        if (perturbInitUlps > 0) {
            Training.perturbParameters(exe, scope, net.main(), perturbInitUlps, seed.seed());
        }
        Timeline timeline = timelineFile == null ? null
                : Timeline.attach(Training.timelineExecutor(exe), net.main(), rank.rank());
        if (checkpoint.load() != null) {
            fleet.loadCheckpoint(checkpoint.load(), scope, net.main(), exe,
                    allowNonfiniteCheckpoint ? LoadOptions.STRICT.allowingNonFinite() : LoadOptions.STRICT);
            out.println("mnist: loaded the training state from " + checkpoint.load());
        }

        DataLoader loader = DataLoader.builder(train, global).shuffle(seed.seed()).dropLast(true)
                .shard(rank.rank(), rank.worldSize()).build();
        int perEpoch = loader.stepsPerEpoch();
        int totalSteps = steps != null ? steps : training.epochs() * perEpoch;
        int totalEpochs = (totalSteps + perEpoch - 1) / perEpoch;
        LossCurve curve = new LossCurve();
        boolean tty = ProgressBar.consoleIsInteractive();
        int done = 0;
        long samples = 0;
        double lastLoss = Double.NaN;
        long t0 = System.nanoTime();
        metrics.stepStarted();
        for (int epoch = 0; epoch < totalEpochs && done < totalSteps; epoch++) {
            int inEpoch = Math.min(perEpoch, totalSteps - done);
            ProgressBar bar = new ProgressBar(out, tty, String.format(Locale.ROOT, "epoch %d/%d", epoch + 1, totalEpochs), inEpoch);
            long epochSamples = 0;
            int i = 0;
            for (Batch b : loader.epoch(epoch)) {
                if (i == inEpoch) {
                    break;
                }
                Map<String, Tensor> r = exe.run(net.main(), scope, Training.feed(net, b.field(0), b.field(1)),
                        List.of(net.loss().name()));
                // the loss of the whole global batch: every rank's mean weighted by its rows, so all ranks agree
                double[] lossAndRows = fleet.util().allReduce(
                        new double[]{r.get(net.loss().name()).getFloat(0) * (double) b.size(), b.size()}, ReduceOp.SUM);
                lastLoss = lossAndRows[0] / lossAndRows[1];
                if (!Double.isFinite(lastLoss)) {
                    throw new IllegalStateException("the loss became " + lastLoss + " at step " + (done + 1)
                            + "; try a smaller --lr");
                }
                curve.add(lastLoss);
                epochSamples += (long) lossAndRows[1];
                i++;
                metrics.stepFinished(done + i, lastLoss, b.size(), (long) lossAndRows[1]);
                bar.update(i, lastLoss, epochSamples);
            }
            done += i;
            samples += epochSamples;
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (timeline != null) {
            Path file = Timeline.rankFile(timelineFile, rank.rank());
            timeline.write(file);
            out.println("mnist: wrote the timeline of " + timeline.size() + " op runs to " + file);
        }
        exe.syncToScope(scope);
        if (checkpoint.save() != null) {
            fleet.saveCheckpoint(checkpoint.save(), scope, net.main());
            out.println("mnist: saved the training state to " + checkpoint.save());
        }
        if (exportOnnx != null) {
            exportOnnx(fleet, net, scope);
        }
        if (!rank.isFirst()) {
            out.printf(Locale.ROOT, "mnist: rank %d done; final loss %.4f; rank 0 evaluates and writes the summary%n",
                    rank.rank(), lastLoss);
            return 0;
        }
        double accuracy = evaluate(net, exe, scope, test);
        double trainAccuracy = evaluate(net, exe, scope, train);
        double l2 = Training.paramsL2(net.main(), scope);
        out.printf(Locale.ROOT, "test accuracy %.4f on %d digits (train %.4f); final loss %.4f; %,.0f samples/s%n",
                accuracy, test.size(), trainAccuracy, lastLoss, samples / seconds);
        metrics.scalar("test/accuracy", accuracy, done);
        metrics.scalar("train/accuracy", trainAccuracy, done);

        Files.createDirectories(rank.logDir());
        curve.writePng(rank.logDir().resolve("loss_curve.png"), "mnist training loss")
                .ifPresent(note -> out.println("mnist: " + note));
        curve.writeCsv(rank.logDir().resolve("loss_curve.csv"));
        new Summary().put("program", "mnist").put("world_size", rank.worldSize()).put("steps", done)
                .put("epochs", totalEpochs).put("global_batch", global).put("batch_size", global / rank.worldSize())
                .put("optimizer", opt.name()).put("lr", training.lr()).put("seed", seed.seed()).put("final_loss", lastLoss)
                .put("test_accuracy", accuracy).put("train_accuracy", trainAccuracy).put("samples_per_sec", samples / seconds).put("params_l2", l2)
                .put("train_seconds", seconds).put("blas", Blas.get().name())
                .write(rank.logDir().resolve("summary.json"));
        out.println("mnist: wrote " + rank.logDir().resolve("summary.json") + ", loss_curve.png and loss_curve.csv");
        return 0;
    }

    /** Writes the forward program, with a softmax after the logits, as ONNX; every rank takes part, rank 0 writes. */
    private void exportOnnx(Fleet fleet, Mlp net, Scope scope) {
        Program inference = net.test().copy();
        Var logits = inference.globalBlock().var(net.logits().name());
        Var probabilities = new Layers(inference, new Program()).softmax(logits);
        fleet.saveInferenceModel(exportOnnx, inference, List.of(net.image().name()),
                List.of(logits.name(), probabilities.name()), scope, InferenceModel.Format.ONNX);
        System.out.println("mnist: wrote the ONNX model " + exportOnnx + " (input " + net.image().name()
                + "; outputs " + logits.name() + ": logits, " + probabilities.name() + ": probabilities)");
    }

    /** Top-1 accuracy of the forward-only program over a whole dataset. */
    static double evaluate(Mlp net, ProgramRunner exe, Scope scope, MnistDataset test) {
        DataLoader loader = DataLoader.builder(test, 500).build();
        long correct = 0;
        for (Batch b : loader.epoch(0)) {
            Map<String, Tensor> r = exe.run(net.test(), scope, Training.feed(net, b.field(0), b.field(1)),
                    List.of(net.accuracy().name()));
            correct += Math.round(r.get(net.accuracy().name()).getFloat(0) * b.size());
        }
        return (double) correct / test.size();
    }
}
