package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Initializer;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.ExecutionSettings;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.cli.TensorBoardOption;
import org.fleet4j.fleet.metrics.StepMetrics;
import org.fleet4j.fleet.metrics.Summary;
import org.fleet4j.launch.NamedProgram;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.text.Quoted;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The built-in {@code grad_sync_perf} program: the cost of synchronising many small gradients. Its program has
 * {@code --tensors} parameters of {@code --size} bytes each; every step computes their gradients (one cheap
 * elementwise op each), synchronises them as the strategy's compiler passes arrange (one allreduce per gradient, or
 * one per bucket) and applies SGD. Rank 0 writes summary.json with the median {@code step_us} of the slowest rank;
 * {@code --compare} also times the unfused program, taking turns with the compiled one in the same run.
 */
@AutoService(NamedProgram.class)
@Command(name = "grad_sync_perf", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Measures gradient synchronisation per step for many small parameters.")
public final class GradSyncPerf implements Callable<Integer>, NamedProgram {
    @Override
    public String programName() {
        return "grad_sync_perf";
    }

    @Option(names = "--tensors", description = "parameters (default ${DEFAULT-VALUE})")
    int tensors = 256;
    @Option(names = "--size", description = "bytes per parameter, with an optional K or M suffix (default ${DEFAULT-VALUE})")
    String size = "4K";
    @Option(names = "--steps", description = "timed steps (default ${DEFAULT-VALUE})")
    int steps = 300;
    @Option(names = "--warmup", description = "untimed steps first (default ${DEFAULT-VALUE})")
    int warmup = 30;
    @Option(names = "--compare", description = "also time the same program with one allreduce per gradient"
            + " (fuse_all_reduce_ops: false), interleaved with the compiled one in this run")
    boolean compare;
    @Mixin
    LogDirOption logDir;
    @Mixin
    TensorBoardOption tensorboard;

    private static final int ROUND = 10;

    public static void main(String[] args) {
        System.exit(ProgramMain.run("grad_sync_perf", new GradSyncPerf(), args));
    }

    /** "4K" -> 4096, "1M" -> 1048576, "512" -> 512; a multiple of 4 (float32 elements). */
    static long parseBytes(String text) {
        String t = text.trim().toUpperCase(Locale.ROOT);
        long unit = t.endsWith("K") ? 1024 : t.endsWith("M") ? 1024 * 1024 : 1;
        String digits = unit == 1 ? t : t.substring(0, t.length() - 1);
        long n;
        try {
            n = Long.parseLong(digits) * unit;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--size: " + Quoted.of(text) + " is not a byte count like 4096, 4K or 1M");
        }
        if (n < 4 || n % 4 != 0) {
            throw new IllegalArgumentException("--size: " + text + " must be a positive multiple of 4 bytes (float32)");
        }
        return n;
    }

    @Override
    public Integer call() throws Exception {
        long bytes = parseBytes(size);
        if (tensors < 1 || steps < 1 || warmup < 0) {
            throw new IllegalArgumentException("--tensors and --steps must be at least 1, --warmup at least 0");
        }
        try (Fleet fleet = Fleet.init()) {
            return measure(fleet, Rank.of(fleet, logDir.folder()), bytes / 4);
        }
    }

    /** One program of the job: built, compiled by its strategy, initialised in its own scope. */
    private record Job(Program main, Scope scope, long allreduces) {
    }

    private Job build(Fleet fleet, long floats, DistributedStrategy strategy) {
        Program main = new Program().setRandomSeed(1);
        Program startup = new Program().setRandomSeed(1);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, floats);
        // loss = sum_i mean(x * p_i): the gradient of p_i is x / floats, one elementwise op per parameter
        List<Var> terms = new ArrayList<>();
        for (int i = 0; i < tensors; i++) {
            Var p = nn.createParameter("p" + i, DType.F32, new long[]{floats}, Initializer.constant(0.5f));
            terms.add(nn.mean(nn.mul(x, p)));
        }
        Var loss = nn.sum(terms);
        if (strategy == null) {
            fleet.distributedOptimizer(new SGD(0.01)).minimize(loss);
        } else {
            fleet.distributedOptimizer(new SGD(0.01), strategy).minimize(loss);
        }
        Scope scope = new Scope();
        new Executor(ExecutorOptions.defaults(), fleet.execContext()).run(startup, scope);
        return new Job(main, scope, main.globalBlock().ops().stream()
                .filter(op -> op.type().equals(CollectiveOpTypes.ALLREDUCE)
                        || op.type().equals(CollectiveOpTypes.ALLREDUCE_START)).count());
    }

    /**
     * Each job's step times in microseconds. With --compare the two programs take turns, ROUND steps each, so both see
     * the same machine load; the compiled program's steps go to {@code metrics}.
     */
    private double[][] time(List<Job> jobs, Executor exe, Map<String, Tensor> feed, StepMetrics metrics) {
        double[][] us = new double[jobs.size()][steps];
        for (int done = 0; done < steps; done += ROUND) {
            for (int k = 0; k < jobs.size(); k++) {
                for (int i = done; i < Math.min(steps, done + ROUND); i++) {
                    if (k == 0) {
                        metrics.stepStarted();
                    }
                    long s = System.nanoTime();
                    exe.run(jobs.get(k).main(), jobs.get(k).scope(), feed, List.of());
                    us[k][i] = (System.nanoTime() - s) / 1e3;
                    if (k == 0) {
                        metrics.stepFinished(i + 1, Double.NaN, 0, 0);
                    }
                }
            }
        }
        return us;
    }

    private int measure(Fleet fleet, Rank rank, long floats) throws Exception {
        List<Job> jobs = new ArrayList<>(List.of(build(fleet, floats, null)));
        if (compare) {
            jobs.add(build(fleet, floats, new DistributedStrategy().fuseAllReduceOps(false)));
        }
        SplittableRandom r = new SplittableRandom(7 + rank.rank());
        Tensor xs = Tensor.zeros(DType.F32, floats);
        for (long i = 0; i < floats; i++) {
            xs.setFloat(i, (float) r.nextDouble());
        }
        Map<String, Tensor> feed = Map.of("x", xs);
        Executor exe = ExecutionSettings.executor(fleet);
        double[][] us;
        try (StepMetrics metrics = tensorboard.open(rank.rank(), exe)) {
            for (Job job : jobs) {
                for (int i = 0; i < warmup; i++) {
                    exe.run(job.main(), job.scope(), feed, List.of());
                }
            }
            fleet.barrierWorker();
            us = time(jobs, exe, feed, metrics);
        }
        double[] medians = new double[jobs.size()];
        for (int k = 0; k < jobs.size(); k++) {
            double[] sorted = us[k].clone();
            Arrays.sort(sorted);
            medians[k] = fleet.util().allReduce(sorted[steps / 2], ReduceOp.MAX);
        }
        if (!rank.isFirst()) {
            return 0;
        }
        System.out.printf(Locale.ROOT, "grad_sync_perf: %d tensors x %d bytes on %d %s, %d allreduce(s) per step: "
                        + "%.1f us/step (median of %d, slowest rank)%n", tensors, floats * 4, rank.worldSize(),
                rank.worldSize() == 1 ? "rank" : "ranks", jobs.getFirst().allreduces(), medians[0], steps);
        Summary summary = new Summary().put("program", "grad_sync_perf").put("world_size", rank.worldSize())
                .put("tensors", tensors).put("tensor_bytes", floats * 4).put("steps", steps).put("warmup", warmup)
                .put("allreduces_per_step", jobs.getFirst().allreduces()).put("step_us", medians[0]);
        if (compare) {
            System.out.printf(Locale.ROOT, "grad_sync_perf: unfused (fuse_all_reduce_ops: false), %d allreduce(s) per step:"
                    + " %.1f us/step, interleaved in the same run: %.2fx the compiled program's time%n",
                    jobs.get(1).allreduces(), medians[1], medians[1] / medians[0]);
            summary.put("unfused_allreduces_per_step", jobs.get(1).allreduces()).put("unfused_step_us", medians[1])
                    .put("speedup_over_unfused", medians[1] / medians[0]);
        }
        Files.createDirectories(rank.logDir());
        summary.write(rank.logDir().resolve("summary.json"));
        return 0;
    }
}
