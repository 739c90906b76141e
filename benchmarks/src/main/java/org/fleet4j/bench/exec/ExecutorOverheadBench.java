package org.fleet4j.bench.exec;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.ops.Kernel;
import org.fleet4j.core.ops.KernelArgs;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the Executor costs per op when the op itself costs nothing: a chain of {@value #OPS} scale ops on a
 * one-element tensor, run as one program step. JMH divides each step's time by the op count, so the score is
 * nanoseconds per op (the target: under 2 µs). {@link #kernelsOnly} runs the same kernels over the same
 * frame in a plain loop, so the difference is what the Executor adds (feeds, checks, error handling).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class ExecutorOverheadBench {
    static final int OPS = 1000;

    private Program program;
    private Executor executor;
    private org.fleet4j.core.exec.Scope scope;
    private Map<String, Tensor> feed;
    private Kernel[] kernels;
    private KernelArgs[] args;

    @Setup(Level.Trial)
    public void setUp() {
        program = new Program();
        Block block = program.globalBlock();
        block.createVar("x", DType.F32, 1).setData(true);
        String prev = "x";
        for (int i = 0; i < OPS; i++) {
            String out = "t" + i;
            block.appendOp("scale", Map.of("X", List.of(prev)), Map.of("Out", List.of(out)),
                    Map.of("scale", 1.0001f, "bias", 0.5f));
            prev = out;
        }
        executor = new Executor();
        scope = new org.fleet4j.core.exec.Scope();
        feed = Map.of("x", Tensor.of(new float[]{1f}, 1));
        executor.run(program, scope, feed, List.of());

        Object[] frame = new Object[OPS + 1];
        frame[0] = feed.get("x");
        kernels = new Kernel[OPS];
        args = new KernelArgs[OPS];
        String[] in = {"X"};
        String[] out = {"Out"};
        for (int i = 0; i < OPS; i++) {
            Op op = block.ops().get(i);
            kernels[i] = OpRegistry.get("scale").kernelFactory().create(op, ExecContext.none());
            args[i] = new KernelArgs(op, frame, in, new int[][]{{i}}, out, new int[][]{{i + 1}});
        }
    }

    /** One step of the whole program: OPS kernels through the Executor. */
    @Benchmark
    @OperationsPerInvocation(OPS)
    public void runStep() {
        executor.run(program, scope, feed, List.of());
    }

    /** The same kernels and frame without the Executor around them. */
    @Benchmark
    @OperationsPerInvocation(OPS)
    public void kernelsOnly() {
        for (int i = 0; i < OPS; i++) {
            kernels[i].run(args[i]);
        }
    }
}
