package org.fleet4j.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.fleet.Timeline;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.metrics.Summary;
import org.fleet4j.strategy.StrategySchema;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The built-in {@code mlp_perf} program: training throughput of an MLP on random data (forward, backward and an
 * SGD update per step), timed per step after a warm-up. On N ranks every step also allreduces the gradients.
 */
@Command(name = "mlp_perf", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Measures MLP training throughput on random data.")
public final class MlpPerf implements Callable<Integer> {
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
    @Option(names = "--seed", description = "seed of parameters and data (default ${DEFAULT-VALUE})")
    long seed = 1;
    @Option(names = "--log_dir", description = "where summary.json goes (default: FLEET_LOG_DIR or log)")
    String logDir;
    @Option(names = "--timeline", description = "write a Chrome trace of the timed steps; rank N writes FILE with .rankN before the extension")
    Path timelineFile;
    @Option(names = "--log_level", description = "info or debug")
    String logLevel = "info";

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
            return measure(fleet, Rank.of(fleet, logDir), widths);
        }
    }

    private int measure(Fleet fleet, Rank rank, int[] widths) throws Exception {
        Blas.get().setThreads(threads);
        System.out.println(Blas.get().description());
        Mlp net = Mlp.build(widths, seed);
        fleet.distributedOptimizer(new SGD(0.01)).minimize(net.loss());
        try (ProgramRunner runner = Training.runner(System.out, "mlp_perf", fleet)) {
            return measure(fleet, rank, widths, net, runner);
        }
    }

    private int measure(Fleet fleet, Rank rank, int[] widths, Mlp net, ProgramRunner exe) throws Exception {
        Scope scope = new Scope();
        exe.run(net.startup(), scope);
        // each rank its own samples, as data-parallel ranks have
        SplittableRandom r = new SplittableRandom(seed + rank.rank());
        Tensor x = Tensor.zeros(batchSize, widths[0]);
        Tensor y = Tensor.zeros(DType.I64, batchSize, 1);
        for (long i = 0; i < x.numel(); i++) {
            x.setFloat(i, (float) r.nextDouble());
        }
        for (long i = 0; i < batchSize; i++) {
            y.setLong(i, r.nextInt(widths[widths.length - 1]));
        }
        Map<String, Tensor> feed = Training.feed(net, x, y);
        List<String> fetch = List.of(net.loss().name());
        for (int i = 0; i < warmup; i++) {
            exe.run(net.main(), scope, feed, fetch);
        }
        // attached after the warm-up so the trace shows the steady state
        Timeline timeline = timelineFile == null ? null
                : Timeline.attach(Training.timelineExecutor(exe), net.main(), rank.rank());
        fleet.barrierWorker();
        // num_iteration_per_run: each call runs that many steps on the feed; a step's time is the call's share
        int perRun = fleet.strategy().get(StrategySchema.EXEC_NUM_ITERATION_PER_RUN);
        int calls = (steps + perRun - 1) / perRun;
        double[] ms = new double[calls];
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            long s = System.nanoTime();
            exe.run(net.main(), scope, feed, fetch);
            ms[i] = (System.nanoTime() - s) / 1e6 / perRun;
        }
        int timed = calls * perRun;
        // the job is as fast as its slowest rank
        double total = fleet.util().allReduce((System.nanoTime() - t0) / 1e9, ReduceOp.MAX);
        double[] sorted = ms.clone();
        Arrays.sort(sorted);
        double median = fleet.util().allReduce(sorted[calls / 2], ReduceOp.MAX);
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
                layers, batchSize, rank.worldSize(), rank.worldSize() == 1 ? "rank" : "ranks", median, timed, samplesPerSec);
        Files.createDirectories(rank.logDir());
        new Summary().put("program", "mlp_perf").put("world_size", rank.worldSize()).put("layers", layers)
                .put("batch_size", batchSize).put("global_batch", batchSize * rank.worldSize()).put("steps", timed)
                .put("warmup", warmup).put("threads", threads)
                .put("step_ms", median).put("step_ms_mean", total * 1e3 / timed).put("samples_per_sec", samplesPerSec)
                .put("blas", Blas.get().name())
                .write(rank.logDir().resolve("summary.json"));
        return 0;
    }
}
