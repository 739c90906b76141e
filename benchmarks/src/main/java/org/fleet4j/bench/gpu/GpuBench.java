package org.fleet4j.bench.gpu;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.CudaBuffer;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.collective.nccl.NcclBackend;
import org.fleet4j.gpu.Cublas;
import org.fleet4j.gpu.CudaEvent;
import org.fleet4j.gpu.CudaStream;
import org.fleet4j.gpu.GpuBuffer;
import org.fleet4j.gpu.GpuDevice;
import org.fleet4j.gpu.GpuRuntime;

/**
 * The figures of the GPU check: cuBLAS GEMM throughput (f32 and bf16 on tensor cores) for square sizes and NCCL
 * allreduce on one rank, each the median of timed repetitions measured with CUDA events. Prints a table and writes
 * one JSON object per figure to the file given with --out.
 *
 * <pre>java ... org.fleet4j.bench.gpu.GpuBench --out results.jsonl [--sizes 1024,4096,8192] [--reps 20]</pre>
 */
public final class GpuBench {
    private final List<String> rows = new ArrayList<>();
    private final int reps;

    private GpuBench(int reps) {
        this.reps = reps;
    }

    public static void main(String[] args) throws IOException {
        Path out = null;
        int[] sizes = {1024, 2048, 4096, 8192};
        int reps = 20;
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--out" -> out = Path.of(require(value, "--out"));
                case "--sizes" -> sizes = Arrays.stream(require(value, "--sizes").split(",")).mapToInt(s -> parse(s, "--sizes")).toArray();
                case "--reps" -> reps = parse(require(value, "--reps"), "--reps");
                default -> usage("unknown option '" + args[i] + "'");
            }
            i++;
        }
        GpuBench bench = new GpuBench(reps);
        try (GpuDevice gpu = GpuDevice.open(0, 0)) {
            System.out.println(gpu.properties() + ", driver CUDA " + GpuRuntime.version(GpuRuntime.driverVersion())
                    + ", runtime " + GpuRuntime.version(GpuRuntime.runtimeVersion()));
            for (int n : sizes) {
                for (Cublas.InputType type : new Cublas.InputType[]{Cublas.InputType.F32, Cublas.InputType.BF16}) {
                    bench.gemm(gpu, type, n);
                }
            }
            bench.allreduce(gpu);
        }
        if (out != null) {
            Files.write(out, bench.rows);
            System.out.println("wrote " + bench.rows.size() + " results to " + out);
        }
    }

    private void gemm(GpuDevice gpu, Cublas.InputType type, int n) {
        int elementBytes = type == Cublas.InputType.F32 ? 4 : 2;
        long bytes = (long) n * n * elementBytes;
        GpuBuffer a = gpu.allocate(bytes);
        GpuBuffer b = gpu.allocate(bytes);
        GpuBuffer c = gpu.allocate((long) n * n * 4);
        gpu.zero(a);
        gpu.zero(b);
        Runnable call = type == Cublas.InputType.F32
                ? () -> gpu.cublas().sgemm(false, false, n, n, n, 1f, a, b, 0f, c)
                : () -> gpu.cublas().gemm(type, false, false, n, n, n, 1f, a, b, 0f, c);
        double ms = medianMillis(gpu.stream(), call);
        double tflops = 2.0 * n * n * n / (ms * 1e-3) / 1e12;
        System.out.printf(Locale.ROOT, "gemm %-4s %5d^3  %8.3f ms  %7.1f TFLOPS%n", type, n, ms, tflops);
        rows.add(String.format(Locale.ROOT, "{\"bench\":\"cublas_gemm\",\"device\":\"%s\",\"dtype\":\"%s\",\"n\":%d,"
                + "\"median_ms\":%.4f,\"tflops\":%.2f,\"reps\":%d}", gpu.properties().name(), type, n, ms, tflops, reps));
        gpu.free(a);
        gpu.free(b);
        gpu.free(c);
    }

    /** A one-rank process group's allreduce on device memory, which its device backend (NCCL) runs. */
    private void allreduce(GpuDevice gpu) {
        Duration timeout = Duration.ofSeconds(60);
        try (ProcessGroup group = ProcessGroups.init(Role.single(), GroupOptions.defaults().withTimeout(timeout))) {
            System.out.println("NCCL " + NcclBackend.ncclVersion() + ", one rank, as the " + group.name()
                    + " group's " + group.deviceBackend(gpu.ordinal()) + " backend");
            for (long bytes = 1 << 20; bytes <= 256L << 20; bytes *= 4) {
                GpuBuffer buffer = gpu.allocate(bytes);
                gpu.zero(buffer);
                CudaBuffer onGpu = buffer.forCollective();
                double ms = medianHostMillis(() -> group.allreduce(onGpu, DataType.F32, ReduceOp.SUM).await(timeout));
                double algbw = bytes / (ms * 1e-3) / 1e9;
                System.out.printf(Locale.ROOT, "allreduce f32 %9d B  %8.3f ms  algbw %7.1f GB/s%n", bytes, ms, algbw);
                rows.add(String.format(Locale.ROOT, "{\"bench\":\"nccl_allreduce\",\"device\":\"%s\",\"ranks\":1,\"bytes\":%d,"
                        + "\"median_ms\":%.4f,\"algbw_gbs\":%.2f,\"reps\":%d}", gpu.properties().name(), bytes, ms, algbw, reps));
                gpu.free(buffer);
            }
        }
    }

    /** Three warm-up calls, then the median over {@code reps} calls of one that returns once the device is done. */
    private double medianHostMillis(Runnable call) {
        for (int i = 0; i < 3; i++) {
            call.run();
        }
        double[] ms = new double[reps];
        for (int i = 0; i < reps; i++) {
            long start = System.nanoTime();
            call.run();
            ms[i] = (System.nanoTime() - start) / 1e6;
        }
        Arrays.sort(ms);
        return ms[reps / 2];
    }

    /** Three warm-up calls, then the median over {@code reps} calls each timed between two events on the stream. */
    private double medianMillis(CudaStream stream, Runnable call) {
        for (int i = 0; i < 3; i++) {
            call.run();
        }
        stream.synchronize();
        double[] ms = new double[reps];
        try (CudaEvent start = new CudaEvent(); CudaEvent end = new CudaEvent()) {
            for (int i = 0; i < reps; i++) {
                start.record(stream);
                call.run();
                end.record(stream);
                end.synchronize();
                ms[i] = end.millisSince(start);
            }
        }
        Arrays.sort(ms);
        return ms[reps / 2];
    }

    private static String require(String value, String option) {
        if (value == null) {
            usage(option + " needs a value");
        }
        return value;
    }

    private static int parse(String s, String option) {
        try {
            int v = Integer.parseInt(s.trim());
            if (v > 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        usage(option + ": '" + s + "' is not a positive whole number");
        return 0;
    }

    private static void usage(String problem) {
        System.err.println("GpuBench: " + problem);
        System.err.println("usage: GpuBench [--out results.jsonl] [--sizes 1024,4096] [--reps 20]");
        System.exit(2);
    }
}
