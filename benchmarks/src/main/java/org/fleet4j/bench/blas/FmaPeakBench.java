package org.fleet4j.bench.blas;

import java.util.concurrent.TimeUnit;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One core's single-precision FMA throughput as Java can reach it: 12 independent FloatVector FMA chains
 * (more than latency x pipes = 4 x 2 on Zen 3, so the FMA units, not the dependency chains, are the limit).
 * The accumulator is the addend, as in the sgemm micro-kernel, so C2 emits one vfmadd231ps per FMA.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class FmaPeakBench {

    static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
    static final int CHAINS = 12;
    static final int STEPS = 4096;

    public float x = 0.999f;
    public float y = 1e-3f;

    /** Floating-point operations in one invocation: STEPS x CHAINS FMAs of one vector, 2 per lane. */
    static double flops() {
        return 2.0 * STEPS * CHAINS * SPECIES.length();
    }

    @Benchmark
    public float fma() {
        FloatVector m = FloatVector.broadcast(SPECIES, x);
        FloatVector d = FloatVector.broadcast(SPECIES, y);
        FloatVector c0 = FloatVector.broadcast(SPECIES, 0f), c1 = c0.add(1f), c2 = c0.add(2f), c3 = c0.add(3f);
        FloatVector c4 = c0.add(4f), c5 = c0.add(5f), c6 = c0.add(6f), c7 = c0.add(7f);
        FloatVector c8 = c0.add(8f), c9 = c0.add(9f), c10 = c0.add(10f), c11 = c0.add(11f);
        for (int i = 0; i < STEPS; i++) {
            c0 = m.fma(d, c0);
            c1 = m.fma(d, c1);
            c2 = m.fma(d, c2);
            c3 = m.fma(d, c3);
            c4 = m.fma(d, c4);
            c5 = m.fma(d, c5);
            c6 = m.fma(d, c6);
            c7 = m.fma(d, c7);
            c8 = m.fma(d, c8);
            c9 = m.fma(d, c9);
            c10 = m.fma(d, c10);
            c11 = m.fma(d, c11);
        }
        return c0.add(c1).add(c2).add(c3).add(c4).add(c5).add(c6).add(c7).add(c8).add(c9).add(c10).add(c11)
                .reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
    }
}
