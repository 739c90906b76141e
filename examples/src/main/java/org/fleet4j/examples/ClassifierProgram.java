package org.fleet4j.examples;

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
import org.fleet4j.core.data.Dataset;
import org.fleet4j.core.data.MnistDataset;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.LoadOptions;
import org.fleet4j.core.io.LoadReport;
import org.fleet4j.core.io.ParameterLoadOptions;
import org.fleet4j.core.io.TorchStateDict;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.models.Classifier;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.fleet.InferenceModel;
import org.fleet4j.fleet.Timeline;
import org.fleet4j.fleet.cli.LogLevelOption;
import org.fleet4j.fleet.cli.TensorBoardOption;
import org.fleet4j.fleet.metrics.LossCurve;
import org.fleet4j.fleet.metrics.ProgressBar;
import org.fleet4j.fleet.metrics.StepMetrics;
import org.fleet4j.fleet.metrics.Summary;
import org.fleet4j.fleet.onnx.OnnxExporter;
import org.fleet4j.launch.NamedProgram;
import picocli.CommandLine.Mixin;

/**
 * What the image classifiers mnist, lenet and resnet share: their options, and the training of a {@link Classifier}
 * on MNIST-style digits under Fleet. Under fleetrun with N ranks each rank trains on its 1/N of every global batch
 * with averaged gradients; every rank saves the checkpoint and ONNX model together, rank 0 tests and writes results.
 * A program says which model it trains ({@link #model}) and on what image layout.
 */
abstract class ClassifierProgram implements Callable<Integer>, NamedProgram {
    @Mixin
    TrainingOptions training;
    @Mixin
    ClassifierOptions options;
    @Mixin
    SeedOption seed;
    @Mixin
    LogDirOption logDir;
    @Mixin
    CheckpointOptions checkpoint;
    @Mixin
    TensorBoardOption tensorboard;
    @Mixin
    LogLevelOption logLevel;

    /** {@code defaults}: the program's own --epochs, --batch_size, --optimizer and --lr. */
    ClassifierProgram(TrainingOptions defaults) {
        this.training = defaults;
    }

    /** The model for images of {@code channels} x {@code rows} x {@code cols} and 10 classes, seeded. */
    abstract Classifier model(long channels, long rows, long cols, long seed);

    /** The model in a few words, for the log ("LeNet-5", "MLP 784-512-512-10"). */
    abstract String describeModel();

    /** Whether the model reads images as [N, 1, rows, cols] (else as [N, rows * cols]). */
    abstract boolean readsNchw();

    /** Whether the summary also reports the accuracy over the whole training set (a second pass over it). */
    boolean reportsTrainAccuracy() {
        return false;
    }

    /** What this program adds to summary.json (its model's settings). */
    void summarize(Summary summary) {
    }

    @Override
    public Integer call() throws Exception {
        options.validate(training.epochs(), training.batchSize());
        try (Fleet fleet = Fleet.init()) {
            return train(fleet, Rank.of(fleet, logDir.folder()));
        }
    }

    private int train(Fleet fleet, Rank rank) throws Exception {
        String name = programName();
        int global = options.globalBatch != null ? options.globalBatch : training.batchSize() * rank.worldSize();
        if (global % rank.worldSize() != 0) {
            // the averaged gradient weights every rank alike, which equals the global batch's gradient only for equal shares
            throw new IllegalArgumentException("--global_batch " + global + " does not split evenly over "
                    + rank.worldSize() + " ranks; use a multiple of " + rank.worldSize());
        }
        if (checkpoint.save() != null) {
            fleet.checkCheckpointWritable(checkpoint.save());
        }
        if (options.exportOnnx != null) {
            try {
                OnnxExporter.checkWritable(options.exportOnnx);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--export_onnx: " + e.getMessage(), e);
            }
        }
        PrintStream out = System.out;
        MnistDataset trainDigits = options.dataDir == null ? MnistDataset.bundled(MnistDataset.Split.TRAIN)
                : MnistDataset.load(options.dataDir, MnistDataset.Split.TRAIN);
        MnistDataset testDigits = options.dataDir == null ? MnistDataset.bundled(MnistDataset.Split.TEST)
                : MnistDataset.load(options.dataDir, MnistDataset.Split.TEST);
        if (testDigits.imageRows() != trainDigits.imageRows() || testDigits.imageCols() != trainDigits.imageCols()) {
            throw new IllegalArgumentException("--data_dir " + options.dataDir + ": the test images are "
                    + testDigits.imageRows() + "x" + testDigits.imageCols() + " but the training images "
                    + trainDigits.imageRows() + "x" + trainDigits.imageCols() + "; both splits need one size");
        }
        Dataset train = readsNchw() ? trainDigits.asNchw() : trainDigits;
        Dataset test = readsNchw() ? testDigits.asNchw() : testDigits;
        if (options.sampleOrder != null) {
            train = SampleOrder.of(options.sampleOrder, train);
        }
        Classifier net = model(1, trainDigits.imageRows(), trainDigits.imageCols(), seed.seed());
        out.println(Blas.get().description());
        out.printf(Locale.ROOT, "%s: %d training and %d test digits of %dx%d; %s; %s lr %s; global batch %d over %d %s%n",
                name, trainDigits.size(), testDigits.size(), trainDigits.imageRows(), trainDigits.imageCols(),
                describeModel(), training.optimizer(), training.lr(), global, rank.worldSize(),
                rank.worldSize() == 1 ? "rank" : "ranks");

        DataLoader loader = options.sampleOrder != null ? DataLoader.builder(train, global).dropLast(true)
                .shard(rank.rank(), rank.worldSize()).build()
                : DataLoader.builder(train, global).shuffle(seed.seed()).dropLast(true)
                .shard(rank.rank(), rank.worldSize()).build();
        if (loader.stepsPerEpoch() == 0) {
            throw new IllegalArgumentException("the " + train.size() + " training samples do not fill one global batch"
                    + " of " + global + "; use a smaller --global_batch or --batch_size");
        }
        int totalSteps = options.steps != null ? options.steps : training.epochs() * loader.stepsPerEpoch();
        Optimizer opt = Training.optimizer(training.optimizer(), schedule(totalSteps), options.weightDecay,
                Training.decayedWeights(net.main()), options.clipGradNorm);
        if (options.freeze != null) {
            out.println(name + ": --freeze keeps " + Training.freeze(net.main(), options.freeze)
                    + " at their initial values");
        }
        fleet.distributedOptimizer(opt).minimize(net.loss());
        try (ProgramRunner runner = Training.runner(out, name, fleet);
             StepMetrics metrics = tensorboard.open(rank.rank(), runner).learningRate(opt.schedule())) {
            return train(fleet, rank, runner, metrics, net, opt, loader, totalSteps, test, train);
        }
    }

    private LrSchedule schedule(int totalSteps) {
        if (options.lrSchedule.equals("constant")) {
            return LrSchedule.constant(training.lr());
        }
        if (options.warmupSteps >= totalSteps) {
            throw new IllegalArgumentException("--warmup_steps " + options.warmupSteps + " leaves no step of the cosine"
                    + " in " + totalSteps + " steps; use fewer warm-up steps or train longer");
        }
        return LrSchedule.warmupCosine(training.lr(), options.warmupSteps, totalSteps, 0, 0);
    }

    private int train(Fleet fleet, Rank rank, ProgramRunner exe, StepMetrics metrics, Classifier net, Optimizer opt,
                      DataLoader loader, int totalSteps, Dataset test, Dataset train) throws Exception {
        String name = programName();
        PrintStream out = System.out;
        Scope scope = new Scope();
        exe.run(net.startup(), scope);
        if (options.initTorch != null) {
            LoadReport r = TorchStateDict.byLayerNames(net.test()).load(options.initTorch, scope, exe,
                    ParameterLoadOptions.STRICT);
            out.println(name + ": loaded " + r.loaded().size() + " weights from the PyTorch state_dict " + options.initTorch);
        }
        if (options.perturbInitUlps > 0) {
            Training.perturbParameters(exe, scope, net.main(), options.perturbInitUlps, seed.seed());
        }
        Timeline timeline = options.timelineFile == null ? null
                : Timeline.attach(Training.timelineExecutor(exe), net.main(), rank.rank());
        if (checkpoint.load() != null) {
            fleet.loadCheckpoint(checkpoint.load(), scope, net.main(), exe,
                    options.allowNonfiniteCheckpoint ? LoadOptions.STRICT.allowingNonFinite() : LoadOptions.STRICT);
            out.println(name + ": loaded the training state from " + checkpoint.load());
        }

        int perEpoch = loader.stepsPerEpoch();
        int totalEpochs = (totalSteps + perEpoch - 1) / perEpoch;
        LossCurve curve = new LossCurve();
        boolean tty = ProgressBar.consoleIsInteractive();
        int done = 0;
        long samples = 0;
        long peakOffHeap = OffHeapMemory.inUse();
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
                peakOffHeap = Math.max(peakOffHeap, OffHeapMemory.inUse());
                i++;
                metrics.stepFinished(done + i, lastLoss, b.size(), (long) lossAndRows[1]);
                bar.update(i, lastLoss, epochSamples);
            }
            done += i;
            samples += epochSamples;
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (timeline != null) {
            Path file = Timeline.rankFile(options.timelineFile, rank.rank());
            timeline.write(file);
            out.println(name + ": wrote the timeline of " + timeline.size() + " op runs to " + file);
        }
        exe.syncToScope(scope);
        if (checkpoint.save() != null) {
            fleet.saveCheckpoint(checkpoint.save(), scope, net.main());
            out.println(name + ": saved the training state to " + checkpoint.save());
        }
        if (options.exportOnnx != null) {
            exportOnnx(fleet, net, scope);
        }
        if (!rank.isFirst()) {
            out.printf(Locale.ROOT, "%s: rank %d done; final loss %.4f; rank 0 evaluates and writes the summary%n",
                    name, rank.rank(), lastLoss);
            return 0;
        }
        double accuracy = evaluate(net, exe, scope, test);
        double trainAccuracy = reportsTrainAccuracy() ? evaluate(net, exe, scope, train) : Double.NaN;
        double l2 = Training.paramsL2(net.main(), scope);
        out.printf(Locale.ROOT, "test accuracy %.4f on %d digits%s; final loss %.4f; %,.0f samples/s%n", accuracy,
                test.size(), reportsTrainAccuracy() ? String.format(Locale.ROOT, " (train %.4f)", trainAccuracy) : "",
                lastLoss, samples / seconds);
        metrics.scalar("test/accuracy", accuracy, done);
        if (reportsTrainAccuracy()) {
            metrics.scalar("train/accuracy", trainAccuracy, done);
        }

        Files.createDirectories(rank.logDir());
        curve.writePng(rank.logDir().resolve("loss_curve.png"), name + " training loss")
                .ifPresent(note -> out.println(name + ": " + note));
        curve.writeCsv(rank.logDir().resolve("loss_curve.csv"));
        Summary summary = new Summary().put("program", name).put("model", describeModel())
                .put("world_size", rank.worldSize()).put("steps", done).put("epochs", totalEpochs)
                .put("global_batch", loader.globalBatchSize()).put("batch_size", loader.localBatchSize())
                .put("optimizer", opt.name()).put("lr", training.lr()).put("lr_schedule", options.lrSchedule)
                .put("warmup_steps", options.warmupSteps).put("weight_decay", options.weightDecay)
                .put("clip_grad_norm", options.clipGradNorm).put("seed", seed.seed()).put("final_loss", lastLoss)
                .put("test_accuracy", accuracy);
        if (reportsTrainAccuracy()) {
            summary.put("train_accuracy", trainAccuracy);
        }
        summary.put("samples_per_sec", samples / seconds).put("params_l2", l2).put("train_seconds", seconds)
                .put("peak_offheap_bytes", peakOffHeap).put("blas", Blas.get().name());
        summarize(summary);
        summary.write(rank.logDir().resolve("summary.json"));
        out.println(name + ": wrote " + rank.logDir().resolve("summary.json") + ", loss_curve.png and loss_curve.csv");
        return 0;
    }

    /** Writes the forward program, with a softmax after the logits, as ONNX; every rank takes part, rank 0 writes. */
    private void exportOnnx(Fleet fleet, Classifier net, Scope scope) {
        Program inference = net.test().copy();
        Var logits = inference.globalBlock().var(net.logits().name());
        Var probabilities = new Layers(inference, new Program()).softmax(logits);
        fleet.saveInferenceModel(options.exportOnnx, inference, List.of(net.image().name()),
                List.of(logits.name(), probabilities.name()), scope, InferenceModel.Format.ONNX);
        System.out.println(programName() + ": wrote the ONNX model " + options.exportOnnx + " (input "
                + net.image().name() + "; outputs " + logits.name() + ": logits, " + probabilities.name()
                + ": probabilities)");
    }

    /** Top-1 accuracy of the forward-only program over a whole dataset. */
    static double evaluate(Classifier net, ProgramRunner exe, Scope scope, Dataset data) {
        DataLoader loader = DataLoader.builder(data, 500).build();
        long correct = 0;
        for (Batch b : loader.epoch(0)) {
            Map<String, Tensor> r = exe.run(net.test(), scope, Training.feed(net, b.field(0), b.field(1)),
                    List.of(net.accuracy().name()));
            correct += Math.round(r.get(net.accuracy().name()).getFloat(0) * b.size());
        }
        return (double) correct / data.size();
    }
}
