package org.fleet4j.bench.blas;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.fleet4j.core.blas.Gemm;
import org.fleet4j.core.blas.JavaGemm;
import org.fleet4j.core.blas.OpenBlasGemm;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * sgemm on the MNIST MLP's fully-connected layers at batch 64 (784-512-512-10): forward Y = X W, and the
 * backward products dX = dY W^T and dW = X^T dY. One thread each, OpenBLAS against the pure-Java kernel.
 * Each invocation is one sgemm, timed on its own (sample mode), so the median ignores the invocations that a
 * shared machine's scheduler interrupted; {@link SgemmReport} turns the times into GFLOPS.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
// Long warm-up: until C2 has compiled it, Vector API code runs interpreted and one sgemm takes seconds.
@Warmup(iterations = 8, time = 1)
@Measurement(iterations = 4, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class SgemmBench {

    @Param({"fc1.fwd", "fc2.fwd", "fc3.fwd", "fc1.dX", "fc2.dX", "fc3.dX", "fc1.dW", "fc2.dW", "fc3.dW"})
    public String shape;

    @Param({"openblas", "java"})
    public String impl;

    private Arena arena;
    private Gemm gemm;
    private MlpShape s;
    private MemorySegment a;
    private MemorySegment b;
    private MemorySegment c;

    @Setup(Level.Trial)
    public void setUp() {
        s = MlpShape.named(shape);
        gemm = switch (impl) {
            case "openblas" -> OpenBlasGemm.load();
            case "java" -> new JavaGemm();
            default -> throw new IllegalArgumentException("impl=" + impl + " is not 'openblas' or 'java'");
        };
        gemm.setThreads(1);
        arena = Arena.ofShared();
        SplittableRandom rnd = new SplittableRandom(1);
        a = random((long) s.m() * s.k(), rnd);
        b = random((long) s.k() * s.n(), rnd);
        c = random((long) s.m() * s.n(), rnd);
    }

    private MemorySegment random(long floats, SplittableRandom rnd) {
        MemorySegment seg = arena.allocate(floats * Float.BYTES, 64);
        for (long i = 0; i < floats; i++) {
            seg.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) (rnd.nextDouble() * 2 - 1));
        }
        return seg;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public MemorySegment sgemm() {
        gemm.sgemm(s.transA(), s.transB(), s.m(), s.n(), s.k(), 1f, a, 0, s.lda(), b, 0, s.ldb(), 0f, c, 0, s.n());
        return c;
    }
}
