package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.data.CharVocabulary;
import org.fleet4j.core.data.TextCorpus;
import org.fleet4j.core.data.TextWindows;
import org.fleet4j.core.data.WindowFile;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.LoadOptions;
import org.fleet4j.core.io.LoadReport;
import org.fleet4j.core.io.ParameterLoadOptions;
import org.fleet4j.core.io.TorchStateDict;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.models.GptConfig;
import org.fleet4j.core.models.GptModel;
import org.fleet4j.core.models.GptSampler;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.AdamW;
import org.fleet4j.core.optim.ClipGradByGlobalNorm;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.fleet.InferenceModel;
import org.fleet4j.fleet.cli.LogLevelOption;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.cli.TensorBoardOption;
import org.fleet4j.fleet.metrics.LossCurve;
import org.fleet4j.fleet.metrics.ProgressBar;
import org.fleet4j.fleet.metrics.StepMetrics;
import org.fleet4j.fleet.metrics.Summary;
import org.fleet4j.fleet.onnx.OnnxExporter;
import org.fleet4j.launch.NamedProgram;
import org.fleet4j.text.Quoted;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The built-in {@code gpt} program: nanoGPT's character-level GPT ({@link GptModel}) trained on the shipped English
 * first names (or any UTF-8 text), reporting training and validation loss in nats per character, then sampling from
 * the trained model. Batches are random windows that depend only on (seed, step), so a resumed training continues
 * the very batches of an uninterrupted one ({@link WindowPosition}); under fleetrun with N ranks each rank takes its
 * share of every global batch.
 */
@AutoService(NamedProgram.class)
@Command(name = "gpt", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Trains a character-level GPT (nanoGPT's) on the shipped English first names or any UTF-8 text,",
                "reports training and validation loss in nats per character, and samples from the trained model."})
public final class Gpt implements Callable<Integer>, NamedProgram {
    /** Windows per run of the evaluation program. */
    private static final int EVAL_BATCH = 64;

    @Override
    public String programName() {
        return "gpt";
    }

    @Option(names = "--n_layer", description = "transformer blocks (default ${DEFAULT-VALUE})")
    int nLayer = 4;
    @Option(names = "--n_head", description = "attention heads per block; must divide --n_embd (default ${DEFAULT-VALUE})")
    int nHead = 4;
    @Option(names = "--n_embd", description = "width of the embeddings and blocks (default ${DEFAULT-VALUE})")
    int nEmbd = 64;
    @Option(names = "--block_size", description = "characters of context (default ${DEFAULT-VALUE})")
    int blockSize = 32;
    @Option(names = "--dropout", description = "dropout probability after the embeddings, on the attention weights and"
            + " after each block's attention and MLP (default ${DEFAULT-VALUE})")
    float dropout = 0f;
    @Option(names = "--data", paramLabel = "FILE", description = "train on this UTF-8 text file (its first 90 % of"
            + " characters; the rest validates) instead of the shipped names")
    Path data;
    @Option(names = "--windows", paramLabel = "FILE", description = "take the training batches from this file (a line"
            + " per step of --global_batch window starts into the training text) instead of drawing them at random")
    Path windowsFile;
    @Option(names = "--init_weights", paramLabel = "FILE", description = "start from these weights: a safetensors"
            + " state_dict with nanoGPT's names (transformer.wte.weight, transformer.h.0.attn.c_attn.weight, ...),"
            + " such as PyTorch saves")
    Path initWeights;
    @Option(names = "--epochs", description = "passes over the training text, each as many windows as it has"
            + " characters (default ${DEFAULT-VALUE})")
    int epochs = 10;
    @Option(names = "--steps", description = "the step to train up to, counted from the start of the training (a"
            + " resumed run continues from its checkpoint's step); overrides --epochs")
    Integer steps;
    @Option(names = "--batch_size", description = "windows per rank per step (default ${DEFAULT-VALUE})")
    int batchSize = 32;
    @Option(names = "--global_batch", description = "windows per step over all ranks, split between them")
    Integer globalBatch;
    @Option(names = "--optimizer", description = "adamw (betas 0.9, 0.99; no decay of biases and norms), adam, sgd or"
            + " momentum (0.9) (default ${DEFAULT-VALUE})")
    String optimizer = "adamw";
    @Option(names = "--lr", description = "learning rate (default ${DEFAULT-VALUE})")
    double lr = 1e-3;
    @Mixin
    LrScheduleOptions schedule;
    @Option(names = "--weight_decay", description = "adamw's decoupled weight decay (default 0.1); the other"
            + " optimizers have none")
    Float weightDecay;
    @Option(names = "--grad_clip", description = "clip the gradients to this global norm, after the ranks' allreduce;"
            + " 0 for none (default ${DEFAULT-VALUE})")
    float gradClip = 1f;
    @Option(names = "--eval_steps", description = "training and validation loss every this many steps, and at the end;"
            + " 0: at the end only (default ${DEFAULT-VALUE})")
    int evalSteps = 100;
    @Option(names = "--eval_windows", description = "validate on this many non-overlapping windows of the validation"
            + " text, evenly spread (default: all of them)")
    int evalWindows = 0;
    @Option(names = "--sample", description = "names (lines) to sample from the trained model (default ${DEFAULT-VALUE})")
    int sample = 8;
    @Option(names = "--temperature", description = "sampling: logits are divided by it; below 1 picks likelier"
            + " characters (default ${DEFAULT-VALUE})")
    double temperature = 1.0;
    @Option(names = "--top_k", description = "sampling: draw from the k likeliest characters; 0 for all (default ${DEFAULT-VALUE})")
    int topK = 0;
    @Option(names = "--prompt", description = "sampling: every sample begins with this text (default: none)")
    String prompt = "";
    @Option(names = "--sample_length", description = "sampling: at most this many characters after the prompt (default ${DEFAULT-VALUE})")
    int sampleLength = 40;
    @Mixin
    SeedOption seed;
    @Option(names = "--perturb_init_ulps", description = "move every initial weight this many float32 ulps up or down"
            + " (seeded), to measure how far rounding alone carries a training (default ${DEFAULT-VALUE})")
    int perturbInitUlps = 0;
    @Mixin
    LogDirOption logDir;
    @Mixin
    CheckpointOptions checkpoint;
    @Option(names = "--export_onnx", paramLabel = "FILE", description = "after training, write the model (ids int64"
            + " [batch, block_size] in; logits and probabilities [batch, block_size, vocab] out) as an ONNX file")
    Path exportOnnx;
    @Mixin
    TensorBoardOption tensorboard;
    @Mixin
    LogLevelOption logLevel;

    public static void main(String[] args) {
        System.exit(ProgramMain.run("gpt", new Gpt(), args));
    }

    @Override
    public Integer call() throws Exception {
        checkFlags();
        TextCorpus corpus = data == null ? TextCorpus.names() : TextCorpus.file(data);
        CharVocabulary vocabulary = corpus.vocabulary();
        int[] context = sampleContext(vocabulary);
        if (topK > vocabulary.size()) {
            throw new IllegalArgumentException("--top_k must be 0 (every character) or 1.." + vocabulary.size()
                    + " (the vocabulary), got " + topK);
        }
        TextWindows train = new TextWindows(corpus.train(), blockSize, "the training text of " + corpus.source());
        TextWindows validation = new TextWindows(corpus.validation(), blockSize, "the validation text of " + corpus.source());
        try (Fleet fleet = Fleet.init()) {
            return train(fleet, Rank.of(fleet, logDir.folder()), corpus, train, validation, context);
        }
    }

    private void checkFlags() {
        for (var f : List.of(new Object[]{"--n_layer", nLayer}, new Object[]{"--n_head", nHead},
                new Object[]{"--n_embd", nEmbd}, new Object[]{"--block_size", blockSize},
                new Object[]{"--batch_size", batchSize}, new Object[]{"--sample_length", sampleLength})) {
            if ((int) f[1] < 1) {
                throw new IllegalArgumentException(f[0] + " must be at least 1, got " + f[1]);
            }
        }
        if (!(dropout >= 0f && dropout < 1f)) {
            throw new IllegalArgumentException("--dropout must be in [0, 1), got " + dropout);
        }
        if (globalBatch != null && globalBatch < 1) {
            throw new IllegalArgumentException("--global_batch must be at least 1, got " + globalBatch);
        }
        if (steps == null && epochs < 1) {
            throw new IllegalArgumentException("--epochs must be at least 1, got " + epochs);
        }
        if (steps != null && steps < 1) {
            throw new IllegalArgumentException("--steps must be at least 1, got " + steps);
        }
        if (!(lr > 0) || !Double.isFinite(lr)) {
            throw new IllegalArgumentException("--lr must be a positive number, got " + lr);
        }
        if (weightDecay != null && (!optimizer.equals("adamw") || !(weightDecay >= 0))) {
            throw new IllegalArgumentException(optimizer.equals("adamw") ? "--weight_decay must be 0 or more, got "
                    + weightDecay : "--weight_decay is adamw's; --optimizer " + Quoted.of(optimizer) + " decays nothing");
        }
        if (!(gradClip >= 0) || !Float.isFinite(gradClip)) {
            throw new IllegalArgumentException("--grad_clip must be 0 (none) or a positive norm, got " + gradClip);
        }
        if (evalSteps < 0 || evalWindows < 0 || sample < 0 || perturbInitUlps < 0) {
            throw new IllegalArgumentException("--eval_steps, --eval_windows, --sample and --perturb_init_ulps must be 0"
                    + " or more");
        }
        if (!(temperature > 0) || !Double.isFinite(temperature)) {
            throw new IllegalArgumentException("--temperature must be a positive number, got " + temperature);
        }
        if (topK < 0) {
            throw new IllegalArgumentException("--top_k must be 0 (every character) or more, got " + topK);
        }
    }

    /** A sample starts at a newline (where a name or line begins), then the prompt; refused when it does not fit. */
    private int[] sampleContext(CharVocabulary vocabulary) {
        int characters = prompt.codePointCount(0, prompt.length());
        if (characters + 1 > blockSize) {
            throw new IllegalArgumentException("--prompt of " + characters + " characters does not fit --block_size "
                    + blockSize + ": a sample's context is a newline and the prompt; give at most " + (blockSize - 1)
                    + " characters, or a larger --block_size");
        }
        int[] ids = new int[characters + 1];
        ids[0] = vocabulary.id(CharVocabulary.NEWLINE);
        int i = 1;
        for (int c : prompt.codePoints().toArray()) {
            if (!vocabulary.contains(c)) {
                throw new IllegalArgumentException("--prompt " + Quoted.of(prompt) + ": character "
                        + Quoted.of(Character.toString(c)) + " is not in the training text's " + vocabulary.size()
                        + " characters; use only characters of " + Quoted.of(vocabulary.characters()));
            }
            ids[i++] = vocabulary.id(c);
        }
        return ids;
    }

    private int train(Fleet fleet, Rank rank, TextCorpus corpus, TextWindows train, TextWindows validation,
                      int[] context) throws Exception {
        int global = globalBatch != null ? globalBatch : batchSize * rank.worldSize();
        if (global % rank.worldSize() != 0) {
            throw new IllegalArgumentException("--global_batch " + global + " does not split evenly over "
                    + rank.worldSize() + " ranks; use a multiple of " + rank.worldSize());
        }
        int perRank = global / rank.worldSize();
        int perEpoch = (int) Math.max(1, (corpus.train().length + (long) global * blockSize - 1) / ((long) global * blockSize));
        int totalSteps = steps != null ? steps : epochs * perEpoch;
        WindowFile windows = windowsFile == null ? null : WindowFile.read(windowsFile, global, train.count());
        if (windows != null && windows.batches().size() < totalSteps) {
            throw new IllegalArgumentException("--windows " + windowsFile + " has " + windows.batches().size()
                    + " batches, fewer than the " + totalSteps + " steps asked; give a line for every step or fewer --steps");
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
        GptConfig config = new GptConfig(corpus.vocabulary().size(), blockSize, nLayer, nHead, nEmbd, dropout);
        GptModel model = GptModel.build(config, seed.seed());
        WindowPosition.declare(model.main(), model.startup());
        LrSchedule lrSchedule = schedule.schedule(lr, totalSteps);
        Optimizer opt = optimizer(lrSchedule);
        fleet.distributedOptimizer(opt).minimize(model.loss());
        out.println(Blas.get().description());
        out.printf(Locale.ROOT, "gpt: %s; vocabulary of %d characters; %d layers, %d heads, n_embd %d, block_size %d,"
                        + " dropout %s: %,d parameters%n", corpus.source(), config.vocabSize(), nLayer, nHead, nEmbd,
                blockSize, dropout, parameterCount(model.main()));
        out.printf(Locale.ROOT, "gpt: %s lr %s (%s), grad_clip %s; global batch %d windows (%,d tokens) over %d %s;"
                        + " %d steps (%d a pass over the training text)%n", opt.name(), lr, schedule.name(),
                gradClip > 0 ? gradClip : "off", global, (long) global * blockSize, rank.worldSize(),
                rank.worldSize() == 1 ? "rank" : "ranks", totalSteps, perEpoch);
        try (ProgramRunner runner = Training.runner(out, "gpt", fleet);
             StepMetrics metrics = tensorboard.open(rank.rank(), runner).learningRate(lrSchedule)) {
            Scope scope = new Scope();
            runner.run(model.startup(), scope);
            if (perturbInitUlps > 0) {
                Training.perturbParameters(runner, scope, model.main(), perturbInitUlps, seed.seed());
            }
            WindowPosition.start(scope, seed.seed());
            if (initWeights != null) {
                loadInitialWeights(fleet, model, runner, scope);
            }
            long done = 0;
            if (checkpoint.load() != null) {
                fleet.loadCheckpoint(checkpoint.load(), scope, model.main(), runner, LoadOptions.STRICT);
                done = WindowPosition.drawn(scope, seed.seed(), checkpoint.load());
                out.println("gpt: loaded the training state from " + checkpoint.load() + " after step " + done);
            }
            Run run = new Run(fleet, rank, runner, scope, model, metrics, train, validation, windows, global, perRank);
            return run.train(done, totalSteps, corpus, opt, context);
        }
    }

    private Optimizer optimizer(LrSchedule lrSchedule) {
        Optimizer opt = switch (optimizer) {
            case "adamw" -> new AdamW(lrSchedule, 0.9f, 0.99f, 1e-8f, weightDecay != null ? weightDecay : 0.1f,
                    AdamW.notBiasOrNorm());
            case "adam" -> new Adam(lrSchedule, 0.9f, 0.999f, 1e-8f, false);
            case "sgd" -> new SGD(lrSchedule, 0f);
            case "momentum" -> new Momentum(lrSchedule, 0.9f, false, 0f);
            default -> throw new IllegalArgumentException("--optimizer must be adamw, adam, sgd or momentum, got "
                    + Quoted.of(optimizer));
        };
        return gradClip > 0 ? opt.withGradClip(new ClipGradByGlobalNorm(gradClip)) : opt;
    }

    /** nanoGPT's weights by name; its causal-mask buffers (attn.bias) and tied lm_head.weight are not weights here. */
    private void loadInitialWeights(Fleet fleet, GptModel model, ProgramRunner runner, Scope scope) {
        LoadReport report = TorchStateDict.byLayerNames(model.main()).load(initWeights, scope, runner,
                ParameterLoadOptions.STRICT.nonStrict());
        if (!report.missing().isEmpty()) {
            throw new IllegalArgumentException("--init_weights " + initWeights + " has no value for " + report.missing()
                    + "; give a state_dict of the same model (--n_layer " + nLayer + ", --n_embd " + nEmbd + ")");
        }
        List<String> extra = report.unexpected().stream()
                .filter(n -> !n.endsWith(".attn.bias") && !n.equals("lm_head.weight")).toList();
        if (!extra.isEmpty()) {
            throw new IllegalArgumentException("--init_weights " + initWeights + " holds " + extra + ", which this model"
                    + " has no place for; give a state_dict of the same model");
        }
        System.out.println("gpt: loaded " + report.loaded().size() + " weights from " + initWeights);
    }

    private static long parameterCount(Program main) {
        return main.globalBlock().vars().stream().filter(Var::isParameter)
                .mapToLong(v -> Arrays.stream(v.shape()).reduce(1, (a, b) -> a * b)).sum();
    }

    /** One training's state and its loop. */
    private final class Run {
        private final Fleet fleet;
        private final Rank rank;
        private final ProgramRunner runner;
        private final Scope scope;
        private final GptModel model;
        private final StepMetrics metrics;
        private final TextWindows train;
        private final TextWindows validation;
        private final WindowFile windows;
        private final int global;
        private final int perRank;
        private final long[] validationStarts;
        private final long[] trainEvalStarts;

        Run(Fleet fleet, Rank rank, ProgramRunner runner, Scope scope, GptModel model, StepMetrics metrics,
            TextWindows train, TextWindows validation, WindowFile windows, int global, int perRank) {
            this.fleet = fleet;
            this.rank = rank;
            this.runner = runner;
            this.scope = scope;
            this.model = model;
            this.metrics = metrics;
            this.train = train;
            this.validation = validation;
            this.windows = windows;
            this.global = global;
            this.perRank = perRank;
            this.validationStarts = validation.sweepStarts(evalWindows);
            // the training loss is measured as the validation loss is: as many fixed windows, with dropout off
            this.trainEvalStarts = train.sweepStarts(validationStarts.length);
        }

        int train(long done, int totalSteps, TextCorpus corpus, Optimizer opt, int[] context) throws Exception {
            PrintStream out = System.out;
            LossCurve curve = new LossCurve(done + 1);
            LossCurve validationCurve = new LossCurve();
            Tensor ids = Tensor.zeros(DType.I64, perRank, blockSize);
            Tensor targets = Tensor.zeros(DType.I64, perRank, blockSize);
            ProgressBar bar = new ProgressBar(out, ProgressBar.consoleIsInteractive(), "steps "
                    + (done + 1) + ".." + totalSteps, (int) Math.max(0, totalSteps - done));
            double lastLoss = Double.NaN;
            double[] evaluated = null;
            long trainNanos = 0;
            long windowsSeen = 0;
            if (done >= totalSteps) {
                out.println("gpt: the checkpoint has " + done + " steps done, --steps asks for " + totalSteps
                        + ": nothing is left to train");
            }
            metrics.stepStarted();
            for (long step = done + 1; step <= totalSteps; step++) {
                long t0 = System.nanoTime();
                long[] starts = windows != null ? windows.starts(step - 1) : train.randomStarts(seed.seed(), step - 1, global);
                train.fill(Arrays.copyOfRange(starts, rank.rank() * perRank, (rank.rank() + 1) * perRank), ids, targets);
                Tensor loss = runner.run(model.main(), scope, model.feed(ids, targets), List.of(model.loss().name()))
                        .get(model.loss().name());
                // every rank's mean weighs alike (equal shares), so the mean of the means is the global batch's
                lastLoss = fleet.util().allReduce(loss.getFloat(0), ReduceOp.SUM) / rank.worldSize();
                trainNanos += System.nanoTime() - t0;
                if (!Double.isFinite(lastLoss)) {
                    throw new IllegalStateException("the loss became " + lastLoss + " at step " + step
                            + "; try a smaller --lr or a --grad_clip");
                }
                windowsSeen += global;
                curve.add(step, lastLoss);
                metrics.stepFinished(step, lastLoss, perRank, global);
                bar.update((int) (step - done), lastLoss, windowsSeen);
                if (evalSteps > 0 && step % evalSteps == 0 && step < totalSteps) {
                    evaluated = evaluate(step, validationCurve, trainNanos, windowsSeen);
                    metrics.stepStarted();
                }
            }
            long stepsRun = Math.max(0, totalSteps - done);
            double seconds = trainNanos / 1e9;
            double tokensPerSec = stepsRun == 0 ? 0 : windowsSeen * blockSize / seconds;
            if (evaluated == null || validationCurve.steps().isEmpty() || validationCurve.steps().getLast() != totalSteps) {
                evaluated = evaluate(Math.max(done, totalSteps), validationCurve, trainNanos, windowsSeen);
            }
            runner.syncToScope(scope);
            WindowPosition.record(scope, seed.seed(), Math.max(done, totalSteps));
            if (checkpoint.save() != null) {
                fleet.saveCheckpoint(checkpoint.save(), scope, model.main());
                out.println("gpt: saved the training state after step " + Math.max(done, totalSteps) + " to "
                        + checkpoint.save());
            }
            if (exportOnnx != null) {
                exportOnnx();
            }
            if (!rank.isFirst()) {
                out.printf(Locale.ROOT, "gpt: rank %d done; final loss %.4f; rank 0 samples and writes the summary%n",
                        rank.rank(), lastLoss);
                return 0;
            }
            List<String> samples = samples(corpus.vocabulary(), context);
            for (int i = 0; i < samples.size(); i++) {
                out.println("gpt: sample " + (i + 1) + ": " + Quoted.bare(samples.get(i)));
            }
            out.printf(Locale.ROOT, "gpt: train loss %.4f, validation loss %.4f nats per character; %,.0f tokens/s%n",
                    evaluated[0], evaluated[1], tokensPerSec);
            Files.createDirectories(rank.logDir());
            curve.writePng(rank.logDir().resolve("loss_curve.png"), "gpt training loss (nats per character)")
                    .ifPresent(note -> out.println("gpt: " + note));
            curve.writeCsv(rank.logDir().resolve("loss_curve.csv"));
            validationCurve.writePng(rank.logDir().resolve("val_loss_curve.png"), "gpt validation loss (nats per character)");
            validationCurve.writeCsv(rank.logDir().resolve("val_loss_curve.csv"));
            new Summary().put("program", "gpt").put("world_size", rank.worldSize()).put("steps", Math.max(done, totalSteps))
                    .put("steps_run", stepsRun).put("global_batch", global).put("batch_size", perRank)
                    .put("block_size", blockSize).put("n_layer", nLayer).put("n_head", nHead).put("n_embd", nEmbd)
                    .put("dropout", dropout).put("vocab_size", corpus.vocabulary().size())
                    .put("parameters", parameterCount(model.main())).put("corpus", corpus.source())
                    .put("optimizer", opt.name()).put("lr", lr).put("lr_schedule", schedule.name())
                    .put("grad_clip", gradClip).put("seed", seed.seed()).put("final_loss", lastLoss)
                    .put("train_loss", evaluated[0]).put("val_loss", evaluated[1])
                    .put("eval_windows", validationStarts.length).put("tokens_per_sec", tokensPerSec)
                    .put("train_seconds", seconds).put("samples", samples).put("blas", Blas.get().name())
                    .write(rank.logDir().resolve("summary.json"));
            out.println("gpt: wrote " + rank.logDir().resolve("summary.json") + ", loss_curve.png/.csv and"
                    + " val_loss_curve.png/.csv");
            return 0;
        }

        /** Training and validation loss over their fixed windows, every rank a share; prints and records them. */
        private double[] evaluate(long step, LossCurve validationCurve, long trainNanos, long windowsSeen) {
            double trainLoss = meanLoss(train, trainEvalStarts);
            double validationLoss = meanLoss(validation, validationStarts);
            validationCurve.add(step, validationLoss);
            metrics.scalar("eval/train_loss", trainLoss, step);
            metrics.scalar("eval/val_loss", validationLoss, step);
            if (rank.isFirst()) {
                System.out.printf(Locale.ROOT, "gpt: step %d: train loss %.4f, validation loss %.4f (%d windows); %,.0f"
                                + " tokens/s%n", step, trainLoss, validationLoss, validationStarts.length,
                        trainNanos == 0 ? 0 : windowsSeen * blockSize / (trainNanos / 1e9));
            }
            return new double[]{trainLoss, validationLoss};
        }

        /** The mean loss per character over the windows at {@code starts}, of which this rank runs its share. */
        private double meanLoss(TextWindows text, long[] starts) {
            int from = (int) ((long) starts.length * rank.rank() / rank.worldSize());
            int to = (int) ((long) starts.length * (rank.rank() + 1) / rank.worldSize());
            double sum = 0;
            for (int i = from; i < to; i += EVAL_BATCH) {
                Tensor[] batch = text.batch(Arrays.copyOfRange(starts, i, Math.min(to, i + EVAL_BATCH)));
                Tensor mean = runner.run(model.eval(), scope, model.feed(batch[0], batch[1]),
                        List.of(model.evalLoss().name())).get(model.evalLoss().name());
                sum += mean.getFloat(0) * (double) batch[0].dim(0);
            }
            return fleet.util().allReduce(new double[]{sum}, ReduceOp.SUM)[0] / starts.length;
        }

        private List<String> samples(CharVocabulary vocabulary, int[] context) {
            if (sample == 0) {
                return List.of();
            }
            List<int[]> drawn = new GptSampler(model, runner, scope).sample(context, sample, sampleLength,
                    vocabulary.id(CharVocabulary.NEWLINE), temperature, topK, seed.seed());
            List<String> texts = new ArrayList<>();
            for (int[] d : drawn) {
                texts.add(prompt + vocabulary.decode(d));
            }
            return texts;
        }

        /** The sampling program with a softmax after the logits, as ONNX; every rank takes part, rank 0 writes. */
        private void exportOnnx() {
            Program inference = model.sampling().copy();
            Var logits = inference.globalBlock().var(model.logits().name());
            Var probabilities = new Layers(inference, new Program()).softmax(logits, -1);
            fleet.saveInferenceModel(exportOnnx, inference, List.of(model.ids().name()),
                    List.of(logits.name(), probabilities.name()), scope, InferenceModel.Format.ONNX);
            System.out.println("gpt: wrote the ONNX model " + exportOnnx + " (input " + model.ids().name() + " int64 [batch, "
                    + blockSize + "]; outputs " + logits.name() + ": logits, " + probabilities.name() + ": probabilities)");
        }
    }
}
