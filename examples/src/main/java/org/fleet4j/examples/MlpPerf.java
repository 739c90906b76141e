package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.device.CpuProgramRunner;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.models.Mlp;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.OffHeapMemoryException;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.ExecutionSettings;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.fleet.Timeline;
import org.fleet4j.fleet.cli.LogLevelOption;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.cli.TensorBoardOption;
import org.fleet4j.fleet.metrics.StepMetrics;
import org.fleet4j.fleet.metrics.Summary;
import org.fleet4j.launch.NamedProgram;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.schema.StrategySchema;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The built-in {@code mlp_perf} program: training throughput of an MLP on random data (forward, backward and an
 * SGD update per step), timed per step after a warm-up. On N ranks every step also allreduces the gradients.
 * {@code --compare_strategy FILE} builds the network a second time, compiled and run as FILE says, and times both in
 * turns of a few steps, so a comparison of strategies sees the same machine load.
 */
@AutoService(NamedProgram.class)
@Command(name = "mlp_perf", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Measures MLP training throughput on random data.")
public final class MlpPerf implements Callable<Integer>, NamedProgram {
    @Override
    public String programName() {
        return "mlp_perf";
    }

    @Option(names = "--layers", description = "layer widths (default ${DEFAULT-VALUE})")
    String layers = "784,512,512,10";
    @Option(names = "--batch_size", description = "samples per rank per step (default ${DEFAULT-VALUE})")
    int batchSize = 64;
    @Option(names = "--steps", description = "timed steps (default ${DEFAULT-VALUE})")
    int steps = 200;
    @Option(names = "--warmup", description = "untimed steps first (default ${DEFAULT-VALUE})")
    int warmup = 50;
    @Option(names = "--threads", description = "BLAS threads (default ${DEFAULT-VALUE})")
    int threads = 1;
    @Mixin
    SeedOption seed;
    @Mixin
    LogDirOption logDir;
    @Option(names = "--timeline", description = "write a Chrome trace of the timed steps; rank N writes FILE with .rankN before the extension")
    Path timelineFile;
    @Option(names = "--compare_strategy", description = "also time the network compiled and run with this strategy file,"
            + " taking turns with the job's strategy in the same run")
    Path compareStrategy;
    @Mixin
    TensorBoardOption tensorboard;
    @Mixin
    LogLevelOption logLevel;

    private static final int ROUND = 5;

    public static void main(String[] args) {
        System.exit(ProgramMain.run("mlp_perf", new MlpPerf(), args));
    }

    @Override
    public Integer call() throws Exception {
        int[] widths = Mlp.parseLayers(layers);
        if (batchSize < 1 || steps < 1 || warmup < 0 || threads < 1) {
            throw new IllegalArgumentException("--batch_size, --steps and --threads must be at least 1, --warmup at least 0");
        }
        try (Fleet fleet = Fleet.init()) {
            return measure(fleet, Rank.of(fleet, logDir.folder()), widths);
        }
    }

    private int measure(Fleet fleet, Rank rank, int[] widths) throws Exception {
        Blas.get().setThreads(threads);
        System.out.println(Blas.get().description());
        Mlp net = Mlp.build(widths, seed.seed());
        fleet.distributedOptimizer(new SGD(0.01)).minimize(net.loss());
        try (ProgramRunner runner = Training.runner(System.out, "mlp_perf", fleet);
             StepMetrics metrics = tensorboard.open(rank.rank(), runner)) {
            Variant job = new Variant(net, runner, fleet.strategy());
            if (compareStrategy == null) {
                return measure(fleet, rank, widths, metrics, List.of(job));
            }
            DistributedStrategy other = DistributedStrategy.load(compareStrategy);
            EffectiveStrategy effective = EffectiveStrategy.resolve(other, fleet.strategy().world());
            Mlp net2 = Mlp.build(widths, seed.seed());
            fleet.distributedOptimizer(new SGD(0.01), other).minimize(net2.loss());
            try (ProgramRunner runner2 = new CpuProgramRunner(new Executor(ExecutionSettings.of(effective),
                    fleet.execContext()))) {
                return measure(fleet, rank, widths, metrics, List.of(job, new Variant(net2, runner2, effective)));
            }
        }
    }

    /** One network compiled and run as a strategy says; num_iteration_per_run steps per call. */
    private record Variant(Mlp net, ProgramRunner runner, int stepsPerCall) {
        Variant(Mlp net, ProgramRunner runner, EffectiveStrategy strategy) {
            this(net, runner, strategy.get(StrategySchema.EXEC_NUM_ITERATION_PER_RUN));
        }
    }

    /** The job strategy's timed steps go to {@code metrics}, the compared strategy's do not. */
    private int measure(Fleet fleet, Rank rank, int[] widths, StepMetrics metrics, List<Variant> variants)
            throws Exception {
        // each rank its own samples, as data-parallel ranks have
        SplittableRandom r = new SplittableRandom(seed.seed() + rank.rank());
        Tensor x;
        Tensor y;
        try {
            x = Tensor.zeros(batchSize, widths[0]);
            y = Tensor.zeros(DType.I64, batchSize, 1);
        } catch (OffHeapMemoryException e) {
            throw e.in("the input batch of --batch_size " + batchSize);
        }
        for (long i = 0; i < x.numel(); i++) {
            x.setFloat(i, (float) r.nextDouble());
        }
        for (long i = 0; i < batchSize; i++) {
            y.setLong(i, r.nextInt(widths[widths.length - 1]));
        }
        List<Scope> scopes = new ArrayList<>();
        for (Variant v : variants) {
            Scope scope = new Scope();
            v.runner().run(v.net().startup(), scope);
            scopes.add(scope);
            Map<String, Tensor> feed = Training.feed(v.net(), x, y);
            for (int i = 0; i < warmup; i += v.stepsPerCall()) {
                v.runner().run(v.net().main(), scope, feed, List.of(v.net().loss().name()));
            }
        }
        // attached after the warm-up so the trace shows the steady state
        Variant first = variants.getFirst();
        Timeline timeline = timelineFile == null ? null
                : Timeline.attach(Training.timelineExecutor(first.runner()), first.net().main(), rank.rank());
        fleet.barrierWorker();
        // with --compare_strategy the variants take turns, ROUND calls each, so both see the same machine load; a
        // call runs num_iteration_per_run steps, and a step's time is the call's share
        int calls = (steps + first.stepsPerCall() - 1) / first.stepsPerCall();
        double[][] ms = new double[variants.size()][calls];
        for (int done = 0; done < calls; done += ROUND) {
            for (int k = 0; k < variants.size(); k++) {
                Variant v = variants.get(k);
                Map<String, Tensor> feed = Training.feed(v.net(), x, y);
                List<String> fetch = List.of(v.net().loss().name());
                for (int i = done; i < Math.min(calls, done + ROUND); i++) {
                    if (k == 0) {
                        metrics.stepStarted();
                    }
                    long s = System.nanoTime();
                    Map<String, Tensor> result = v.runner().run(v.net().main(), scopes.get(k), feed, fetch);
                    ms[k][i] = (System.nanoTime() - s) / 1e6 / v.stepsPerCall();
                    if (k == 0 && metrics.wanted()) {
                        long samples = (long) batchSize * v.stepsPerCall();
                        metrics.stepFinished((long) (i + 1) * v.stepsPerCall(), result.get(v.net().loss().name()).getFloat(0),
                                samples, samples * rank.worldSize());
                    }
                }
            }
        }
        int timed = calls * first.stepsPerCall();
        // the job is as fast as its slowest rank
        double[] medians = new double[variants.size()];
        for (int k = 0; k < variants.size(); k++) {
            double[] sorted = ms[k].clone();
            Arrays.sort(sorted);
            medians[k] = fleet.util().allReduce(sorted[calls / 2], ReduceOp.MAX);
        }
        double total = fleet.util().allReduce(Arrays.stream(ms[0]).sum() * first.stepsPerCall() / 1e3, ReduceOp.MAX);
        double samplesPerSec = (double) batchSize * rank.worldSize() * timed / total;
        if (timeline != null) {
            Path file = Timeline.rankFile(timelineFile, rank.rank());
            timeline.write(file);
            System.out.println("mlp_perf: wrote the timeline of " + timeline.size() + " op runs to " + file);
        }
        if (!rank.isFirst()) {
            return 0;
        }
        System.out.printf(Locale.ROOT, "mlp_perf: layers %s batch %d x %d %s: %.3f ms/step (median of %d, slowest rank), %,.0f samples/s%n",
                layers, batchSize, rank.worldSize(), rank.worldSize() == 1 ? "rank" : "ranks", medians[0], timed, samplesPerSec);
        Files.createDirectories(rank.logDir());
        Summary summary = new Summary().put("program", "mlp_perf").put("world_size", rank.worldSize()).put("layers", layers)
                .put("batch_size", batchSize).put("global_batch", batchSize * rank.worldSize()).put("steps", timed)
                .put("warmup", warmup).put("threads", threads)
                .put("step_ms", medians[0]).put("step_ms_mean", total * 1e3 / timed).put("samples_per_sec", samplesPerSec)
                .put("blas", Blas.get().name());
        if (variants.size() > 1) {
            System.out.printf(Locale.ROOT, "mlp_perf: with %s instead, taking turns %d calls at a time: %.3f ms/step,"
                    + " %.2fx the job strategy's time%n", compareStrategy, ROUND, medians[1], medians[1] / medians[0]);
            summary.put("compare_strategy", compareStrategy.toString()).put("compare_step_ms", medians[1])
                    .put("compare_over_job", medians[1] / medians[0]);
        }
        summary.write(rank.logDir().resolve("summary.json"));
        return 0;
    }
}
