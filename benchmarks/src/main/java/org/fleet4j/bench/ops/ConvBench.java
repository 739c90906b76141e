package org.fleet4j.bench.ops;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.blas.Gemm;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.ConvOps;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Forward + backward of single conv2d layers, one thread, in steady state: for each layer a program of conv2d and its
 * conv2d_grad (the input gradient too, unless the layer reads the data), run by the Executor with the input and the
 * output gradient fed. Every layer is first run for the warm-up time, all layers in turn (so C2 has compiled every
 * loop of every shape), then each layer's steps are timed one by one. Prints one line per layer, and the GEMM peak
 * (OpenBLAS's, or the Java GEMM's, as {@link Blas} chooses) on a 1024 x 1024 x 1024 product:
 * <pre>
 * gemm_peak_gflops 187.3
 * layer resnet.s1 median_ms 6.81 p10_ms 6.70 p90_ms 7.02 gflops 101.2
 * </pre>
 * Usage: {@code ConvBench --batch 64 --warmup_s 30 --steps 200 NAME:CIN:COUT:K:STRIDE:PAD:SIZE[:first] ...}, the
 * layer specs scripts/bench/conv_vs_torch.sh and scripts/peers/torch_conv_perf.py share.
 */
public final class ConvBench {
    private ConvBench() {
    }

    /** One conv layer: square kernel, stride and padding, square input of {@code size}; first = no input gradient. */
    record Layer(String name, int cin, int cout, int k, int stride, int pad, int size, boolean first) {
        static Layer parse(String spec) {
            String[] p = spec.split(":");
            if (p.length < 7) {
                throw new IllegalArgumentException("layer spec '" + spec + "' is not NAME:CIN:COUT:K:STRIDE:PAD:SIZE[:first]");
            }
            return new Layer(p[0], Integer.parseInt(p[1]), Integer.parseInt(p[2]), Integer.parseInt(p[3]),
                    Integer.parseInt(p[4]), Integer.parseInt(p[5]), Integer.parseInt(p[6]),
                    p.length > 7 && p[7].equals("first"));
        }

        int out() {
            return (size + 2 * pad - k) / stride + 1;
        }

        /** Floating-point operations of a step: 2 per multiply-add, forward, filter gradient and input gradient. */
        double flops(int batch) {
            double forward = 2.0 * batch * cout * cin * k * k * out() * out();
            return forward * (first ? 2 : 3);
        }
    }

    /** A layer's program, scope and feed, ready to step. */
    private record Built(Layer layer, Program program, Scope scope, Map<String, Tensor> feed) {
    }

    private static Tensor random(SplittableRandom r, long... shape) {
        Tensor t = Tensor.zeros(DType.F32, shape);
        for (long i = 0; i < t.numel(); i++) {
            t.setFloat(i, (float) (2 * r.nextDouble() - 1));
        }
        return t;
    }

    private static Built build(Layer l, int batch) {
        SplittableRandom r = new SplittableRandom(l.name().hashCode());
        Program p = new Program();
        Block b = p.globalBlock();
        b.createVar("x", DType.F32, batch, l.cin(), l.size(), l.size()).setData(true);
        b.createVar("w", DType.F32, l.cout(), l.cin(), l.k(), l.k()).setPersistable(true);
        b.createVar("dy", DType.F32, batch, l.cout(), l.out(), l.out()).setData(true);
        Map<String, Object> attrs = Map.of("strides", new int[]{l.stride(), l.stride()},
                "paddings", new int[]{l.pad(), l.pad()});
        b.appendOp(ConvOps.CONV2D, Map.of("Input", List.of("x"), "Filter", List.of("w")), Map.of("Output", List.of("y")),
                attrs);
        Map<String, List<String>> gradOut = l.first() ? Map.of("Filter@GRAD", List.of("dw"))
                : Map.of("Input@GRAD", List.of("dx"), "Filter@GRAD", List.of("dw"));
        b.appendOp(ConvOps.CONV2D + "_grad", Map.of("Input", List.of("x"), "Filter", List.of("w"),
                "Output", List.of("y"), "Output@GRAD", List.of("dy")), gradOut, attrs);
        Scope scope = new Scope();
        scope.put("w", random(r, l.cout(), l.cin(), l.k(), l.k()));
        return new Built(l, p, scope, Map.of("x", random(r, batch, l.cin(), l.size(), l.size()),
                "dy", random(r, batch, l.cout(), l.out(), l.out())));
    }

    private static double gemmPeak(Gemm gemm) {
        int n = 1024;
        MemorySegment a = Tensor.zeros(DType.F32, n, n).segment();
        MemorySegment c = Tensor.zeros(DType.F32, n, n).segment();
        double best = Double.MAX_VALUE;
        for (int i = 0; i < 20; i++) {
            long t0 = System.nanoTime();
            gemm.sgemm(false, false, n, n, n, 1f, a, 0, n, a, 0, n, 0f, c, 0, n);
            best = Math.min(best, System.nanoTime() - t0);
        }
        return 2.0 * n * n * n / best;
    }

    public static void main(String[] args) {
        int batch = 64;
        double warmupSeconds = 30;
        int steps = 200;
        List<Layer> layers = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--batch" -> batch = Integer.parseInt(args[++i]);
                case "--warmup_s" -> warmupSeconds = Double.parseDouble(args[++i]);
                case "--steps" -> steps = Integer.parseInt(args[++i]);
                default -> layers.add(Layer.parse(args[i]));
            }
        }
        if (layers.isEmpty()) {
            System.err.println("usage: ConvBench [--batch 64] [--warmup_s 30] [--steps 200] NAME:CIN:COUT:K:STRIDE:PAD:SIZE[:first] ...");
            System.exit(2);
        }
        System.out.println("# " + Blas.description());
        System.out.printf(Locale.ROOT, "gemm_peak_gflops %.1f%n", gemmPeak(Blas.get()));
        List<Built> built = new ArrayList<>();
        for (Layer l : layers) {
            built.add(build(l, batch));
        }
        try (Executor exe = new Executor()) {
            long end = System.nanoTime() + (long) (warmupSeconds * 1e9);
            long warmupSteps = 0;
            do {
                for (Built b : built) {
                    exe.run(b.program(), b.scope(), b.feed(), List.of());
                }
                warmupSteps++;
            } while (System.nanoTime() < end);
            System.out.println("# warm-up: " + warmupSteps + " steps of every layer");
            for (Built b : built) {
                double[] ms = new double[steps];
                for (int s = 0; s < steps; s++) {
                    long t0 = System.nanoTime();
                    exe.run(b.program(), b.scope(), b.feed(), List.of());
                    ms[s] = (System.nanoTime() - t0) / 1e6;
                }
                Arrays.sort(ms);
                double median = ms[steps / 2];
                System.out.printf(Locale.ROOT, "layer %s median_ms %.4f p10_ms %.4f p90_ms %.4f gflops %.1f%n",
                        b.layer().name(), median, ms[steps / 10], ms[steps * 9 / 10],
                        b.layer().flops(batch) / median / 1e6);
            }
        }
    }
}
