package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.data.CriteoReader;
import org.fleet4j.core.data.CriteoRow;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.LoadOptions;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.models.Mlp;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.optim.Adagrad;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.fleet.cli.LogLevelOption;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.cli.TensorBoardOption;
import org.fleet4j.fleet.metrics.LossCurve;
import org.fleet4j.fleet.metrics.ProgressBar;
import org.fleet4j.fleet.metrics.StepMetrics;
import org.fleet4j.fleet.metrics.Summary;
import org.fleet4j.launch.NamedProgram;
import org.fleet4j.pserver.table.TableStats;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The built-in {@code ctr} program: a {@link WideDeep} click-through-rate model trained on Criteo-format files, then
 * tested with exact AUC and logloss. Its embeddings are local tables (ids hashed into {@code --vocab_size} rows per
 * slot); under fleetrun with N ranks each rank streams its share of the training files and the sparse and dense
 * gradients are averaged by allreduce. Every rank tests (the ranks hold the same parameters); rank 0 writes results.
 * With a strategy of mode ps (e.g. {@code bin/fleetrun --server_num 2 --worker_num 2 --strategy ps.yaml ctr ...}) the
 * same program trains against parameter servers: the sparse tables are keyed by the raw 64-bit ids (no hashing), the
 * servers run {@code initServer}/{@code runServer}, and the checkpoint flags name a folder of the servers' shards.
 */
@AutoService(NamedProgram.class)
@Command(name = "ctr", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Trains Wide&Deep on Criteo-format data and reports test AUC and logloss.",
                "Its optimizers are lazy: a sparse gradient updates only the rows it has."})
public final class Ctr implements Callable<Integer>, NamedProgram {
    @Override
    public String programName() {
        return "ctr";
    }

    private static final int EVAL_BATCH = 4096;

    @Option(names = "--data_dir", required = true, description = "folder with train* and test* Criteo files, plain or gzipped (bin/fleetrun ctr_data writes one)")
    Path dataDir;
    @Mixin
    TrainingOptions training = new TrainingOptions(1, 256, "adam", 0.002);
    @Option(names = "--initial_accumulator_value", description = "adagrad: where each element's sum of squared gradients starts; above 0 it bounds the first steps, which at 0 are lr * sign(gradient) (default ${DEFAULT-VALUE})")
    float initialAccumulator = 0f;
    @Mixin
    SeedOption seed;
    @Option(names = "--embedding_dim", description = "width of each slot's embedding, 8 to 16 (default ${DEFAULT-VALUE})")
    int embeddingDim = 8;
    @Option(names = "--vocab_size", description = "rows of each slot's local table; ids are hashed into them (default ${DEFAULT-VALUE})")
    long vocabSize = 10_007;
    @Option(names = "--hidden", description = "widths of the MLP's hidden layers (default ${DEFAULT-VALUE})")
    String hidden = "64,32";
    @Option(names = "--eval_steps", description = "test AUC every this many steps, for auc_curve.png (default: ten times over the training)")
    Integer evalSteps;
    @Option(names = "--incremental_checkpoint", description = "parameter-server mode with --save_checkpoint: after the"
            + " first epoch's full save, each epoch's save holds only the rows changed since the one before and names it"
            + " as its parent; the earlier epochs' folders are kept, since loading follows the chain")
    private boolean incrementalCheckpoint;
    @Option(names = "--skip_bad_lines", description = "count and report malformed lines instead of stopping at the first")
    boolean skipBadLines;
    @Mixin
    LogDirOption logDir;
    @Mixin
    CheckpointOptions checkpoint;
    @Mixin
    TensorBoardOption tensorboard;
    @Mixin
    LogLevelOption logLevel;

    public static void main(String[] args) {
        System.exit(ProgramMain.run("ctr", new Ctr(), args));
    }

    @Override
    public Integer call() throws Exception {
        if (training.epochs() < 1 || training.batchSize() < 1) {
            throw new IllegalArgumentException("--epochs and --batch_size must be at least 1, got " + training.epochs() + " and " + training.batchSize());
        }
        if (embeddingDim < 8 || embeddingDim > 16) {
            throw new IllegalArgumentException("--embedding_dim must be between 8 and 16, got " + embeddingDim);
        }
        if (evalSteps != null && evalSteps < 1) {
            throw new IllegalArgumentException("--eval_steps must be at least 1, got " + evalSteps);
        }
        if (vocabSize < 2) {
            throw new IllegalArgumentException("--vocab_size must be at least 2 (row 0 holds missing values), got " + vocabSize);
        }
        int[] widths = Mlp.parseLayers(hidden);
        if (Arrays.stream(widths).anyMatch(w -> w < 1)) {
            throw new IllegalArgumentException("--hidden widths must be positive, got " + hidden);
        }
        Optimizer opt = optimizer();
        List<Path> train = dataFiles("train");
        List<Path> test = dataFiles("test");
        try (Fleet fleet = Fleet.init()) {
            WideDeep net = WideDeep.build(embeddingDim, vocabSize, widths, seed.seed());
            fleet.distributedOptimizer(opt).minimize(net.loss());
            if (fleet.isServer()) {
                if (checkpoint.save() != null) {
                    fleet.checkPersistablesWritable(checkpoint.save());
                }
                fleet.initServer(checkpoint.load() == null ? null : CtrProgress.read(checkpoint.load()).tables());
                fleet.runServer();
                return 0;
            }
            Rank rank = Rank.of(fleet, logDir.folder());
            if (checkpoint.save() != null && fleet.isPsMode()) {
                fleet.checkPersistablesWritable(checkpoint.save());
            } else if (checkpoint.save() != null) {
                fleet.checkCheckpointWritable(checkpoint.save());
            }
            if (fleet.isPsMode()) {
                fleet.initWorker();
            }
            int status;
            try (ProgramRunner runner = Training.runner(System.out, "ctr", fleet);
                 StepMetrics metrics = tensorboard.open(rank.rank(), runner).learningRate(opt.schedule())) {
                status = train(fleet, rank, runner, metrics, net, opt, train, test);
            }
            if (fleet.isPsMode()) {
                fleet.stopWorker();
            }
            return status;
        }
    }

    private Optimizer optimizer() {
        Optimizer checked = Training.optimizer(training.optimizer(), training.lr());
        if (initialAccumulator != 0f) {
            if (!training.optimizer().equals("adagrad")) {
                throw new IllegalArgumentException("--initial_accumulator_value is adagrad's; --optimizer is " + training.optimizer());
            }
            return new Adagrad(LrSchedule.constant(training.lr()), Adagrad.DEFAULT_EPSILON, initialAccumulator);
        }
        // lazy Adam: a row no batch touched keeps its moments, as a parameter server's sparse table does
        return training.optimizer().equals("adam") ? new Adam(LrSchedule.constant(training.lr()), 0.9f, 0.999f, 1e-8f, true) : checked;
    }

    /** The regular files in --data_dir whose names start with {@code prefix}, sorted by name. */
    private List<Path> dataFiles(String prefix) throws IOException {
        if (!Files.isDirectory(dataDir)) {
            throw new IllegalArgumentException("--data_dir " + dataDir + " is not a folder; write one with"
                    + " bin/fleetrun ctr_data --rows 100000 --out " + dataDir);
        }
        try (Stream<Path> files = Files.list(dataDir)) {
            List<Path> found = files.filter(f -> f.getFileName().toString().startsWith(prefix) && Files.isRegularFile(f))
                    .sorted().toList();
            if (found.isEmpty()) {
                throw new IllegalArgumentException("--data_dir " + dataDir + " has no " + prefix + "* files; it needs"
                        + " train* and test* Criteo files (bin/fleetrun ctr_data --rows 100000 --out DIR writes them)");
            }
            return found;
        }
    }

    private int train(Fleet fleet, Rank rank, ProgramRunner exe, StepMetrics metrics, WideDeep net, Optimizer opt,
                      List<Path> train, List<Path> test) throws Exception {
        PrintStream out = System.out;
        Scope scope = new Scope();
        exe.run(net.startup(), scope);
        long vocab = fleet.isPsMode() ? CtrFeatures.RAW_IDS : vocabSize;
        Program testProgram = fleet.testProgram(net.test());
        if (checkpoint.load() != null && !fleet.isPsMode()) {
            fleet.loadCheckpoint(checkpoint.load(), scope, net.main(), exe, LoadOptions.STRICT);
            out.println("ctr: loaded the training state from " + checkpoint.load());
        }
        long stepsPerEpoch = stepsPerEpoch(fleet, rank, train);
        // parameter-server mode: the servers loaded the tables; the workers go on after the last epoch saved
        CtrProgress resumed = checkpoint.load() != null && fleet.isPsMode() ? CtrProgress.read(checkpoint.load()) : null;
        int firstEpoch = resumed == null ? 0 : resumed.epochs();
        if (resumed != null) {
            checkResumable(resumed, stepsPerEpoch);
            out.printf(Locale.ROOT, "ctr: resuming after epoch %d (step %d) from %s%n", firstEpoch, resumed.steps(),
                    resumed.tables());
        }
        CtrProgress saved = resumed;
        out.println(Blas.get().description());
        out.printf(Locale.ROOT, "ctr: Wide&Deep, %d slots x %d-wide embeddings of %s, MLP %s; %s lr %s; batch %d"
                        + " per rank over %d %s; %d steps per epoch%n", CriteoRow.SPARSE, embeddingDim,
                fleet.isPsMode() ? "raw ids on " + fleet.serverNum() + " parameter server(s) (" + fleet.psMode()
                        + ", " + fleet.protocol() + ")" : String.format(Locale.ROOT, "%,d rows", vocabSize),
                hidden, training.optimizer(), training.lr(), training.batchSize(), rank.worldSize(), rank.worldSize() == 1 ? "rank" : "ranks",
                stepsPerEpoch);

        long evalEvery = evalSteps != null ? evalSteps : Math.max(1, stepsPerEpoch * training.epochs() / 10);
        long done = resumed == null ? 0 : resumed.steps();
        // global steps: a resumed run's curves go on where the run it continues left off
        LossCurve lossCurve = new LossCurve(done + 1);
        LossCurve aucCurve = new LossCurve(done + 1);
        boolean tty = ProgressBar.consoleIsInteractive();
        CriteoRow row = new CriteoRow();
        double lastLoss = Double.NaN;
        long samples = 0;
        long trainNanos = 0;
        TestResult result = null;
        for (int epoch = firstEpoch; epoch < training.epochs(); epoch++) {
            ProgressBar bar = new ProgressBar(out, tty, String.format(Locale.ROOT, "epoch %d/%d", epoch + 1, training.epochs()),
                    Math.toIntExact(stepsPerEpoch));
            long t0 = System.nanoTime();
            long evalNanos = 0; // test time, left out of samples_per_sec
            long epochSamples = 0;
            try (CriteoReader reader = CriteoReader.open(train, rank.rank(), rank.worldSize(), skipBadLines)) {
                metrics.stepStarted();
                for (int step = 1; step <= stepsPerEpoch; step++) {
                    CtrBatch b = CtrBatch.read(reader, row, training.batchSize(), vocab);
                    Map<String, Tensor> r = exe.run(net.main(), scope, net.feed(b), List.of(net.loss().name()));
                    // the loss of the whole global batch: every rank's mean weighted by its rows, so all ranks agree
                    double[] lossAndRows = fleet.util().allReduce(
                            new double[]{r.get(net.loss().name()).getFloat(0) * (double) b.rows(), b.rows()}, ReduceOp.SUM);
                    lastLoss = lossAndRows[0] / lossAndRows[1];
                    if (!Double.isFinite(lastLoss)) {
                        throw new IllegalStateException("the loss became " + lastLoss + " at step " + step
                                + " of epoch " + (epoch + 1) + "; try a smaller --lr");
                    }
                    lossCurve.add(lastLoss);
                    epochSamples += (long) lossAndRows[1];
                    bar.update(step, lastLoss, epochSamples);
                    done++;
                    metrics.stepFinished(done, lastLoss, b.rows(), (long) lossAndRows[1]);
                    if (step == stepsPerEpoch && fleet.isPsMode()) {
                        // the epoch's test reads the model as the servers hold it after every trainer's last update
                        fleet.barrierWorker();
                    }
                    if (done % evalEvery == 0 || step == stepsPerEpoch) {
                        long e0 = System.nanoTime();
                        result = evaluate(net, testProgram, vocab, exe, scope, test);
                        evalNanos += System.nanoTime() - e0;
                        aucCurve.add(done, result.auc);
                        metrics.scalar("test/auc", result.auc, done);
                        metrics.scalar("test/logloss", result.logloss, done);
                        metrics.stepStarted();
                    }
                }
            }
            trainNanos += System.nanoTime() - t0 - evalNanos;
            samples += epochSamples;
            out.printf(Locale.ROOT, "epoch %d/%d: test AUC %.4f, logloss %.4f on %,d rows%n", epoch + 1, training.epochs(),
                    result.auc, result.logloss, result.rows);
            if (checkpoint.save() != null && fleet.isPsMode()) {
                saved = saveProgress(fleet, new CtrProgress(epoch + 1, done, CtrProgress.tablesAfter(checkpoint.save(), epoch + 1)), saved);
            }
        }
        boolean trained = result != null;
        if (!trained) { // a resumed training that had finished: the loaded model is tested (and saved again)
            out.printf(Locale.ROOT, "ctr: the checkpoint has all %d epoch(s) done: nothing was left to train; testing"
                    + " the loaded model%n", training.epochs());
            result = evaluate(net, testProgram, vocab, exe, scope, test);
            if (checkpoint.save() != null) {
                saveProgress(fleet, new CtrProgress(firstEpoch, done, CtrProgress.tablesAfter(checkpoint.save(), firstEpoch)), saved);
            }
        }
        double seconds = trainNanos / 1e9;
        exe.syncToScope(scope);
        if (checkpoint.save() != null && !fleet.isPsMode()) {
            fleet.saveCheckpoint(checkpoint.save(), scope, net.main());
            out.println("ctr: saved the training state to " + checkpoint.save());
        }
        if (!rank.isFirst()) {
            out.printf(Locale.ROOT, "ctr: rank %d done; rank 0 writes the summary%n", rank.rank());
            return 0;
        }
        out.printf(Locale.ROOT, "test AUC %.4f, logloss %.4f on %,d rows; %s%n", result.auc, result.logloss, result.rows,
                trained ? String.format(Locale.ROOT, "final loss %.4f; %,.0f samples/s", lastLoss, samples / seconds)
                        : "nothing was left to train");
        Files.createDirectories(rank.logDir());
        lossCurve.writePng(rank.logDir().resolve("loss_curve.png"), "ctr training loss")
                .ifPresent(note -> out.println("ctr: " + note));
        lossCurve.writeCsv(rank.logDir().resolve("loss_curve.csv"));
        aucCurve.writePng(rank.logDir().resolve("auc_curve.png"), String.format(Locale.ROOT,
                "ctr test AUC at %d points (every %d steps and each epoch's end)", aucCurve.steps().size(), evalEvery))
                .ifPresent(note -> out.println("ctr: " + note));
        Summary summary = new Summary();
        if (fleet.isPsMode()) {
            // what the servers hold after training: rows, bytes, and what admission kept out and eviction took
            long rows = 0;
            long bytes = 0;
            long pending = 0;
            long evicted = 0;
            long freed = 0;
            for (List<TableStats> server : fleet.serverTableStats()) {
                for (TableStats t : server) {
                    if (t.kind().equals("sparse")) {
                        rows += t.keys();
                        bytes += t.bytes();
                        pending += t.pending();
                        evicted += t.evicted();
                        freed += t.freedBytes();
                    }
                }
            }
            summary.put("sparse_rows", rows).put("sparse_bytes", bytes).put("sparse_pending_ids", pending)
                    .put("rows_evicted", evicted).put("evicted_bytes_freed", freed);
            out.printf(Locale.ROOT, "ctr: the servers hold %,d sparse rows (%,d bytes); %,d ids counted but not"
                    + " admitted; %,d rows evicted (%,d bytes freed)%n", rows, bytes, pending, evicted, freed);
        }
        summary.put("program", "ctr").put("auc", result.auc).put("logloss", result.logloss)
                .put("samples_per_sec", trained ? samples / seconds : Double.NaN)
                .put("mode", fleet.isPsMode() ? "ps-" + fleet.psMode() : "local")
                .put("protocol", fleet.protocol()).put("servers", fleet.serverNum()).put("workers", rank.worldSize())
                .put("auc_curve", aucCurve(aucCurve)).put("final_loss", lastLoss).put("epochs", training.epochs())
                .put("steps", stepsPerEpoch * training.epochs()).put("batch_size", training.batchSize()).put("optimizer", opt.name())
                .put("lr", training.lr()).put("seed", seed.seed()).put("embedding_dim", embeddingDim).put("vocab_size", vocabSize)
                .put("test_rows", result.rows).put("train_seconds", seconds).put("blas", Blas.get().name())
                .write(rank.logDir().resolve("summary.json"));
        out.println("ctr: wrote " + rank.logDir().resolve("summary.json") + ", loss_curve.png, loss_curve.csv and auc_curve.png");
        return 0;
    }

    /**
     * Parameter-server mode: every server saves its tables to {@code progress.tables()}, then trainer 0 records the
     * progress, which replaces {@code replaced} (its tables are removed when they lie in the same folder).
     */
    private CtrProgress saveProgress(Fleet fleet, CtrProgress progress, CtrProgress replaced) {
        boolean incremental = incrementalCheckpoint && replaced != null;
        if (incremental) {
            fleet.savePersistablesIncremental(progress.tables(), progress.epochs(), progress.steps());
        } else {
            fleet.savePersistables(progress.tables(), progress.epochs(), progress.steps());
        }
        if (fleet.isFirstWorker()) {
            // an incremental save needs its parents: no earlier folder is removed
            progress.write(checkpoint.save(), incrementalCheckpoint ? null : replaced);
            System.out.printf(Locale.ROOT, "ctr: the parameter servers saved their tables after epoch %d (step %d) to %s%n",
                    progress.epochs(), progress.steps(), progress.tables());
        }
        return progress;
    }

    /** A checkpoint resumes this run only when it ends on an epoch boundary of the same steps per epoch. */
    private void checkResumable(CtrProgress resumed, long stepsPerEpoch) {
        if (resumed.epochs() > training.epochs()) {
            throw new IllegalArgumentException("--load_checkpoint " + checkpoint.load() + " has " + resumed.epochs()
                    + " epochs finished, more than --epochs " + training.epochs());
        }
        if (resumed.epochs() < training.epochs() && resumed.steps() != resumed.epochs() * stepsPerEpoch) {
            throw new IllegalArgumentException("--load_checkpoint " + checkpoint.load() + " was saved after " + resumed.steps()
                    + " steps in " + resumed.epochs() + " epoch(s), but this run takes " + stepsPerEpoch + " steps per"
                    + " epoch; resume with the data, --batch_size and --worker_num that saved it");
        }
    }

    /** [global step, test AUC] pairs. */
    private static List<List<Number>> aucCurve(LossCurve curve) {
        List<Long> steps = curve.steps();
        List<Double> aucs = curve.values();
        List<List<Number>> pairs = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            pairs.add(List.of(steps.get(i), aucs.get(i)));
        }
        return pairs;
    }

    /**
     * Reads this rank's share once (which also finds a malformed line before training starts) and returns the steps
     * every rank takes per epoch: the fewest any rank's rows fill, so the ranks' allreduces pair up.
     */
    private long stepsPerEpoch(Fleet fleet, Rank rank, List<Path> train) {
        long rows;
        try (CriteoReader reader = CriteoReader.open(train, rank.rank(), rank.worldSize(), skipBadLines)) {
            CriteoRow row = new CriteoRow();
            while (reader.next(row)) {
                // counting
            }
            rows = reader.rows();
            System.out.printf(Locale.ROOT, "ctr: rank %d reads %,d training rows from %d of %d file(s) (sharded %s)%n",
                    rank.rank(), rows, reader.files().size(), train.size(), reader.sharding().name().toLowerCase(Locale.ROOT).replace('_', ' '));
            if (reader.skippedLines() > 0) {
                System.out.printf(Locale.ROOT, "ctr: skipped %,d malformed line(s) of rank %d's share; the first: %s%n",
                        reader.skippedLines(), rank.rank(), reader.firstSkipped());
            }
        }
        long mine = rows / training.batchSize() + (rank.worldSize() == 1 && rows % training.batchSize() != 0 ? 1 : 0);
        long steps = fleet.util().allReduce(mine, ReduceOp.MIN);
        if (steps == 0) {
            throw new IllegalArgumentException("--batch_size " + training.batchSize() + " is more than some rank's share of the "
                    + "training rows (rank " + rank.rank() + " has " + rows + "); use a smaller --batch_size or more data");
        }
        return steps;
    }

    private record TestResult(double auc, double logloss, int rows) {
    }

    /** Exact AUC and logloss of the forward-only program over every test row. */
    private TestResult evaluate(WideDeep net, Program testProgram, long vocab, ProgramRunner exe, Scope scope,
                                List<Path> test) {
        float[] logits = new float[EVAL_BATCH];
        int[] labels = new int[EVAL_BATCH];
        int n = 0;
        CriteoRow row = new CriteoRow();
        try (CriteoReader reader = CriteoReader.open(test, skipBadLines)) {
            CtrBatch b;
            while ((b = CtrBatch.read(reader, row, EVAL_BATCH, vocab)) != null) {
                Tensor z = exe.run(testProgram, scope, net.feed(b), List.of(net.logit().name())).get(net.logit().name());
                if (n + b.rows() > logits.length) {
                    logits = Arrays.copyOf(logits, Math.max(2 * logits.length, n + b.rows()));
                    labels = Arrays.copyOf(labels, logits.length);
                }
                for (int i = 0; i < b.rows(); i++) {
                    logits[n + i] = z.getFloat(i);
                    labels[n + i] = b.label(i);
                }
                n += b.rows();
            }
        }
        return new TestResult(BinaryMetrics.auc(logits, labels, n), BinaryMetrics.logloss(logits, labels, n), n);
    }
}
