package org.fleet4j.bench.ops;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Forward and backward of one GPT transformer block (nanoGPT's: pre-norm, causal self-attention, GELU MLP; no dropout)
 * on one thread, loss = mean of the block's output, the parameters' gradients computed, no update. Driven line by line
 * from standard input so a script can interleave it with its PyTorch peer (scripts/peers/torch_gpt_block.py) without
 * warming either up twice:
 * <pre>
 *   warmup N     runs N steps; answers "warm N"
 *   measure N    runs N steps, timing each; answers "ms MEDIAN P10 P90 tokens_per_s TPS cpu_ms MEDIAN" (the
 *                median of the steps' CPU time on this thread, less inflated than wall time on a loaded machine)
 *   profile N    runs N steps; answers "op TYPE MS_PER_STEP" per op type (most first), then "end"
 *   quit
 * </pre>
 * Arguments: {@code [batch 64] [seq 64] [n_embd 128] [n_head 4]}; 64 x 64 = 4,096 tokens per step.
 */
public final class TransformerOpsBench {
    private final Program main;
    private final Scope scope = new Scope();
    private final Executor executor = new Executor();
    private final Map<String, Tensor> feed;
    private final List<String> fetch;
    private final long tokens;

    private TransformerOpsBench(int batch, int seq, int width, int heads) {
        Layers nn = new Layers(new Program().setRandomSeed(1), new Program().setRandomSeed(1));
        Var x = nn.data("x", DType.F32, batch, seq, width);
        Var loss = nn.mean(nn.transformerBlock(x, heads, true, null, 0f, false, "transformer.h.0"));
        Backward.appendBackward(loss);
        main = nn.main();
        executor.run(nn.startup(), scope);
        SplittableRandom r = new SplittableRandom(7);
        float[] v = new float[batch * seq * width];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (2 * r.nextDouble() - 1);
        }
        feed = Map.of("x", Tensor.of(v, batch, seq, width));
        fetch = List.of(loss.name());
        tokens = (long) batch * seq;
    }

    private void step() {
        executor.run(main, scope, feed, fetch);
    }

    /** Each step's wall time and this thread's CPU time (which a loaded machine inflates less). */
    private String measure(int steps) {
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        double[] ms = new double[steps];
        double[] cpuMs = new double[steps];
        for (int i = 0; i < steps; i++) {
            long c0 = cpu.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            step();
            ms[i] = (System.nanoTime() - t0) / 1e6;
            cpuMs[i] = (cpu.getCurrentThreadCpuTime() - c0) / 1e6;
        }
        Arrays.sort(ms);
        Arrays.sort(cpuMs);
        double median = ms[steps / 2];
        return String.format(Locale.ROOT, "ms %.3f %.3f %.3f tokens_per_s %.0f cpu_ms %.3f", median, ms[steps / 10],
                ms[steps * 9 / 10], tokens / (median / 1e3), cpuMs[steps / 2]);
    }

    private void profile(int steps, StringBuilder out) {
        Map<String, Long> nanos = new HashMap<>();
        long[] started = new long[1];
        executor.addObserver(new Executor.OpObserver() {
            @Override
            public void opStarted(int index, String type) {
                started[0] = System.nanoTime();
            }

            @Override
            public void opFinished(int index, String type) {
                nanos.merge(type, System.nanoTime() - started[0], Long::sum);
            }
        });
        for (int i = 0; i < steps; i++) {
            step();
        }
        TreeMap<Long, String> byTime = new TreeMap<>();
        nanos.forEach((type, n) -> byTime.put(-n * 1000 - byTime.size(), type));
        byTime.forEach((k, type) -> out.append(String.format(Locale.ROOT, "op %s %.3f%n", type,
                nanos.get(type) / 1e6 / steps)));
    }

    public static void main(String[] args) throws Exception {
        int[] p = {64, 64, 128, 4};
        for (int i = 0; i < Math.min(args.length, p.length); i++) {
            p[i] = Integer.parseInt(args[i]);
        }
        TransformerOpsBench bench = new TransformerOpsBench(p[0], p[1], p[2], p[3]);
        System.out.println("ready " + Blas.description());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] cmd = line.trim().split("\\s+");
            int n = cmd.length > 1 ? Integer.parseInt(cmd[1]) : 0;
            switch (cmd[0]) {
                case "warmup" -> {
                    for (int i = 0; i < n; i++) {
                        bench.step();
                    }
                    System.out.println("warm " + n);
                }
                case "measure" -> System.out.println(bench.measure(n));
                case "profile" -> {
                    StringBuilder sb = new StringBuilder();
                    bench.profile(n, sb);
                    System.out.print(sb.append("end\n"));
                }
                case "quit" -> {
                    return;
                }
                default -> System.out.println("error: unknown command '" + line + "' (warmup N, measure N, profile N, quit)");
            }
            System.out.flush();
        }
    }
}
