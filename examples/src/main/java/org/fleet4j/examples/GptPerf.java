package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
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
import org.fleet4j.core.models.GptConfig;
import org.fleet4j.core.models.GptModel;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.optim.AdamW;
import org.fleet4j.core.optim.ClipGradByGlobalNorm;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.fleet.cli.LogLevelOption;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.metrics.Summary;
import org.fleet4j.launch.NamedProgram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The built-in {@code gpt_perf} program: training throughput of the {@code gpt} program's model and recipe (AdamW with
 * the decay exclusions, clipping by global norm) on random token ids, timed per step after a warm-up: tokens/s from
 * the median step, the stepping thread's CPU time (less inflated by other processes on a loaded machine), and the
 * peak off-heap memory of each rank (sampled after every step). On N ranks every step also allreduces the gradients.
 */
@AutoService(NamedProgram.class)
@Command(name = "gpt_perf", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Measures the training throughput of gpt's model (tokens/s) on random token ids.")
public final class GptPerf implements Callable<Integer>, NamedProgram {
    /** Distinct random batches cycled through, so that drawing ids costs nothing in the timed steps. */
    private static final int BATCHES = 4;

    @Override
    public String programName() {
        return "gpt_perf";
    }

    @Option(names = "--n_layer", description = "transformer blocks (default ${DEFAULT-VALUE})")
    int nLayer = 4;
    @Option(names = "--n_head", description = "attention heads (default ${DEFAULT-VALUE})")
    int nHead = 4;
    @Option(names = "--n_embd", description = "width (default ${DEFAULT-VALUE})")
    int nEmbd = 128;
    @Option(names = "--block_size", description = "tokens per sequence (default ${DEFAULT-VALUE})")
    int blockSize = 64;
    @Option(names = "--vocab_size", description = "token ids are drawn from 0..vocab_size-1 (default ${DEFAULT-VALUE})")
    int vocabSize = 64;
    @Option(names = "--batch_size", description = "sequences per rank per step (default ${DEFAULT-VALUE})")
    int batchSize = 64;
    @Option(names = "--steps", description = "timed steps (default ${DEFAULT-VALUE})")
    int steps = 50;
    @Option(names = "--warmup", description = "untimed steps first (default ${DEFAULT-VALUE})")
    int warmup = 100;
    @Mixin
    SeedOption seed;
    @Mixin
    LogDirOption logDir;
    @Mixin
    LogLevelOption logLevel;

    public static void main(String[] args) {
        System.exit(ProgramMain.run("gpt_perf", new GptPerf(), args));
    }

    @Override
    public Integer call() throws Exception {
        if (batchSize < 1 || steps < 1 || warmup < 0 || vocabSize < 2) {
            throw new IllegalArgumentException("--batch_size (" + batchSize + ") and --steps (" + steps + ") must be at"
                    + " least 1, --warmup (" + warmup + ") at least 0 and --vocab_size (" + vocabSize + ") at least 2");
        }
        try (Fleet fleet = Fleet.init()) {
            return measure(fleet, Rank.of(fleet, logDir.folder()));
        }
    }

    private int measure(Fleet fleet, Rank rank) throws Exception {
        System.out.println(Blas.get().description());
        GptModel model = GptModel.build(new GptConfig(vocabSize, blockSize, nLayer, nHead, nEmbd, 0f), seed.seed());
        fleet.distributedOptimizer(new AdamW(LrSchedule.constant(1e-3), 0.9f, 0.99f, 1e-8f, 0.1f, AdamW.notBiasOrNorm())
                .withGradClip(new ClipGradByGlobalNorm(1f))).minimize(model.loss());
        SplittableRandom r = new SplittableRandom(seed.seed() * 31 + rank.rank());
        Tensor[][] batches = new Tensor[BATCHES][];
        for (int b = 0; b < BATCHES; b++) {
            Tensor ids = Tensor.zeros(DType.I64, batchSize, blockSize);
            Tensor targets = Tensor.zeros(DType.I64, batchSize, blockSize);
            for (long i = 0; i < ids.numel(); i++) {
                ids.setLong(i, r.nextInt(vocabSize));
                targets.setLong(i, r.nextInt(vocabSize));
            }
            batches[b] = new Tensor[]{ids, targets};
        }
        List<String> fetch = List.of(model.loss().name());
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double[] ms = new double[steps];
        double[] cpuMs = new double[steps];
        long peak = 0;
        try (ProgramRunner runner = Training.runner(System.out, "gpt_perf", fleet)) {
            Scope scope = new Scope();
            runner.run(model.startup(), scope);
            for (int i = 0; i < warmup; i++) {
                Tensor[] b = batches[i % BATCHES];
                runner.run(model.main(), scope, model.feed(b[0], b[1]), fetch);
                peak = Math.max(peak, OffHeapMemory.inUse());
            }
            fleet.barrierWorker();
            for (int i = 0; i < steps; i++) {
                Tensor[] b = batches[i % BATCHES];
                Map<String, Tensor> feed = model.feed(b[0], b[1]);
                long c0 = threads.getCurrentThreadCpuTime();
                long t0 = System.nanoTime();
                runner.run(model.main(), scope, feed, fetch);
                ms[i] = (System.nanoTime() - t0) / 1e6;
                cpuMs[i] = (threads.getCurrentThreadCpuTime() - c0) / 1e6;
                peak = Math.max(peak, OffHeapMemory.inUse());
            }
        }
        double[] sorted = ms.clone();
        Arrays.sort(sorted);
        Arrays.sort(cpuMs);
        // the job is as fast as its slowest rank
        double median = fleet.util().allReduce(sorted[steps / 2], ReduceOp.MAX);
        double cpu = fleet.util().allReduce(cpuMs[steps / 2], ReduceOp.MAX);
        long peakMax = fleet.util().allReduce(peak, ReduceOp.MAX);
        long tokens = (long) batchSize * blockSize * rank.worldSize();
        double tokensPerSec = tokens / (median / 1e3);
        if (!rank.isFirst()) {
            return 0;
        }
        System.out.printf(Locale.ROOT, "gpt_perf: %d layers, %d heads, n_embd %d, block_size %d, batch %d x %d rank(s)"
                        + " = %,d tokens a step: median %.2f ms (p10 %.2f, p90 %.2f), CPU %.2f ms on the stepping thread;"
                        + " %,.0f tokens/s; peak off-heap %.1f MiB per rank%n", nLayer, nHead, nEmbd, blockSize, batchSize,
                rank.worldSize(), tokens, median, sorted[steps / 10], sorted[steps * 9 / 10], cpu, tokensPerSec,
                peakMax / 1048576.0);
        Files.createDirectories(rank.logDir());
        new Summary().put("program", "gpt_perf").put("world_size", rank.worldSize()).put("n_layer", nLayer)
                .put("n_head", nHead).put("n_embd", nEmbd).put("block_size", blockSize).put("batch_size", batchSize)
                .put("tokens_per_step", tokens).put("steps", steps).put("warmup", warmup).put("step_ms", median)
                .put("step_ms_p10", sorted[steps / 10]).put("step_ms_p90", sorted[steps * 9 / 10]).put("cpu_ms", cpu)
                .put("tokens_per_sec", tokensPerSec).put("peak_offheap_bytes", peakMax).put("blas", Blas.get().name())
                .write(rank.logDir().resolve("summary.json"));
        return 0;
    }
}
