package org.fleet4j.fleet;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.fleet4j.collective.ReduceOp;
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
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;

/**
 * A rank program for the Fleet tests, run under the real launcher ({@link #launch}), or as a rank on a thread
 * ({@link #run}: TwoRanksInOneJvmTest). It exercises {@code fleet.util()} and the
 * barrier, then trains a small classifier data-parallel, initialised with a different seed on every rank so that
 * only the startup broadcast can make the ranks agree, and records every result in OUT_DIR/rank-N.properties.
 * A one-rank run also trains the same model started one ulp away ({@link RoundingNoise}) and records it as "noise.*",
 * the float32 noise that the tests judge several-rank runs by. Arguments: OUT_DIR GLOBAL_BATCH STEPS. With
 * PROBE_STALL_RANK=r, rank r stops taking part right after Fleet.init;
 * with PROBE_SPARSE=1 the model also has a sparse embedding (SelectedRows gradients).
 */
public final class FleetProbe {
    private FleetProbe() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        Path out = Path.of(args[0]);
        int globalBatch = Integer.parseInt(args[1]);
        int steps = Integer.parseInt(args[2]);
        try (Fleet fleet = Fleet.init()) {
            int rank = fleet.workerIndex();
            if (("" + rank).equals(System.getenv("PROBE_STALL_RANK"))) {
                stall();
            }
            write(out.resolve("rank-" + rank + ".properties"),
                    run(fleet, globalBatch, steps, "1".equals(System.getenv("PROBE_SPARSE"))));
        }
    }

    /**
     * Runs the probe as a job of {@code nproc} rank processes under the real launcher in {@code work/name}, with
     * {@code env} added to the ranks' environment; returns what each rank recorded, failing with the job's output
     * when it did not exit 0.
     */
    static Properties[] launch(Path work, String name, int nproc, Map<String, String> env, int globalBatch, int steps)
            throws IOException, InterruptedException {
        Path out = Files.createDirectories(work.resolve(name + "-out"));
        LaunchedJob job = LaunchedJob.run(work.resolve(name), nproc, env, Duration.ofSeconds(120),
                FleetProbe.class.getName(), out.toString(), "" + globalBatch, "" + steps);
        if (job.exitCode() != 0) {
            throw new AssertionError("the probe's job " + name + " failed: " + job.describe());
        }
        Properties[] ranks = new Properties[nproc];
        for (int r = 0; r < nproc; r++) {
            ranks[r] = new Properties();
            ranks[r].load(new StringReader(Files.readString(out.resolve("rank-" + r + ".properties"))));
        }
        return ranks;
    }

    /**
     * What one rank of the job of {@code fleet} records: util's results, then the training of {@code steps} steps of
     * {@code globalBatch} samples over all ranks, its kernels on the job's rings; {@code sparse} adds the embedding.
     */
    static Properties run(Fleet fleet, int globalBatch, int steps, boolean sparse) {
        Properties result = new Properties();
        int rank = fleet.workerIndex();
        FleetUtil util = fleet.util();
        result.setProperty("worker_num", "" + fleet.workerNum());
        result.setProperty("node_num", "" + fleet.nodeNum());
        result.setProperty("local_rank", "" + fleet.localRank());
        result.setProperty("first", "" + fleet.isFirstWorker());
        result.setProperty("sum", "" + util.allReduce(rank + 1.5, ReduceOp.SUM));
        result.setProperty("min", "" + util.allReduce(rank + 1.5, ReduceOp.MIN));
        result.setProperty("max", "" + util.allReduce(10L * (rank + 1), ReduceOp.MAX));
        result.setProperty("gather", Arrays.toString(util.allGather(100L + rank)));
        fleet.barrierWorker();

        Program main = new Program().setRandomSeed(100 + rank);
        Program startup = new Program().setRandomSeed(100 + rank);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 4);
        Var y = nn.data("label", DType.I64, -1, 1);
        Var features = x;
        if (sparse) {
            // a sparse embedding of the label, so its gradient is SelectedRows of different rows on every rank
            features = nn.add(x, nn.reshape(nn.embedding(y, 3, 4, true), -1, 4));
        }
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(nn.fc(features, 6, "relu"), 3, null), y));
        fleet.distributedOptimizer(new SGD(0.5)).minimize(loss);
        result.setProperty("main_ops", main.globalBlock().ops().stream().map(op -> op.type())
                .collect(Collectors.joining(",")));

        Executor exe = new Executor(ExecutorOptions.defaults(), fleet.execContext());
        Scope scope = new Scope();
        exe.run(startup, scope);
        result.setProperty("initial", params(main, scope));
        DataLoader loader = DataLoader.builder(TensorDataset.randomClassification(7, 96, 4, 3), globalBatch)
                .shuffle(3).dropLast(true).shard(rank, fleet.workerNum()).build();
        result.setProperty("losses", train(util, exe, main, scope, loss, loader, steps).toString());
        result.setProperty("trained", params(main, scope));
        if (fleet.workerNum() == 1) {
            // the same training started one ulp away: its drift is the float32 noise other runs are judged by
            Scope noise = new Scope();
            exe.run(startup, noise);
            RoundingNoise.perturbParameters(main, noise, 1, 1);
            result.setProperty("noise.losses", train(util, exe, main, noise, loss, loader, steps).toString());
            result.setProperty("noise.trained", params(main, noise));
        }
        result.setProperty("registered_bucket_bytes", "" + fleet.registeredBucketBytes());
        return result;
    }

    /** Trains {@code steps} steps; returns the loss of every step over the whole global batch (all ranks' rows). */
    private static List<Double> train(FleetUtil util, Executor exe, Program main, Scope scope, Var loss, DataLoader loader,
                                      int steps) {
        List<Double> losses = new ArrayList<>();
        for (int epoch = 0; losses.size() < steps; epoch++) {
            for (Batch b : loader.epoch(epoch)) {
                if (losses.size() == steps) {
                    break;
                }
                float mean = exe.run(main, scope, Map.of("x", b.field(0), "label", b.field(1)), List.of(loss.name()))
                        .get(loss.name()).getFloat(0);
                double[] sumAndRows = util.allReduce(new double[]{mean * (double) b.size(), b.size()}, ReduceOp.SUM);
                losses.add(sumAndRows[0] / sumAndRows[1]);
            }
        }
        return losses;
    }

    /** A rank that stops taking part without dying; it gives up after a minute so nothing outlives a broken test. */
    private static void stall() throws InterruptedException {
        Thread.sleep(60_000);
        System.exit(99);
    }

    private static String params(Program main, Scope scope) {
        StringBuilder s = new StringBuilder();
        for (Var v : main.globalBlock().vars()) {
            if (v.isParameter()) {
                s.append(v.name()).append('=').append(Arrays.toString(scope.get(v.name()).toFloatArray())).append(';');
            }
        }
        return s.toString();
    }

    /** The test polls for nothing, but a half-written file must never be read: write, then move. */
    private static void write(Path file, Properties p) throws IOException {
        StringWriter text = new StringWriter();
        p.store(text, null);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text.toString());
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    }
}
