package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.ControlOps;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;

/**
 * The executor's rules for the compiler's programs on several threads: collectives are issued in program order (every
 * rank must issue them alike), and gradient merge's conditional regions give the results of program order.
 */
class ParallelExecutionTest {
    private static final ExecutorOptions FOUR = ExecutorOptions.defaults().withNumThreads(4);

    private static Nets.Trained train(Program main, Program startup, String loss, ExecutorOptions options, int steps) {
        try (Executor exe = new Executor(options)) {
            Scope scope = new Scope();
            exe.run(startup, scope);
            List<Float> losses = new ArrayList<>();
            for (int s = 0; s < steps; s++) {
                losses.add(exe.run(main, scope, Nets.batch(s), List.of(loss)).get(loss).getFloat(0));
            }
            Map<String, float[]> params = new LinkedHashMap<>();
            for (Var v : main.globalBlock().vars()) {
                if (v.persistable() && v.dtype() == DType.F32) {
                    params.put(v.name(), scope.get(v.name()).toFloatArray());
                }
            }
            return new Nets.Trained(losses, params);
        }
    }

    /**
     * Six allreduces, all ready at once after backward and independent of each other, are issued in program order
     * on every one of 40 steps on four threads.
     */
    @Test
    void collectivesAreIssuedInProgramOrderOnFourThreads() {
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{16, 12}, new SGD(0.1));
        List<Long> programOrder = new ArrayList<>();
        for (Op op : net.main().globalBlock().ops()) {
            if (op.type().equals(CollectiveOpTypes.ALLREDUCE)) {
                long n = 1;
                for (long d : net.main().globalBlock().var(op.in("X")).shape()) {
                    n *= d;
                }
                programOrder.add(n);
            }
        }
        assertEquals(6, programOrder.size());
        assertEquals(6, programOrder.stream().distinct().count(), "sizes tell the allreduces apart: " + programOrder);
        StandInAllreduce.CALLS.clear();
        train(net.main(), net.startup(), net.loss(), FOUR, 40);
        List<Long> issued = StandInAllreduce.CALLS.stream().map(StandInAllreduce.Call::floats).toList();
        assertEquals(40 * 6, issued.size());
        for (int step = 0; step < 40; step++) {
            assertEquals(programOrder, issued.subList(step * 6, step * 6 + 6), "step " + step);
        }
    }

    @Test
    void gradientMergeRegionsOnFourThreadsTrainAsProgramOrder() {
        Nets.Net net = Nets.mlpWithAllreduce("tanh", new int[]{16, 12}, new Momentum(0.05, 0.9f), "avg");
        Program merged = new GradientMergePass(3, true).apply(net.main()).program();
        assertTrue(Nets.opTypes(merged).contains(ControlOps.BEGIN));
        Nets.Trained order = train(merged, merged.startupProgram(), net.loss(), ExecutorOptions.defaults(), 9);
        assertSame(order, train(merged, merged.startupProgram(), net.loss(), FOUR, 9));
        StandInOverlapOps.register();
        Program bucketedOverlap = new OverlapAllreducePass().apply(new FuseAllReducePass(new GradientBucketer(1000, 50, 600, 1))
                .apply(merged).program()).program();
        assertTrue(Nets.opTypes(bucketedOverlap).contains(CollectiveOpTypes.ALLREDUCE_START), Nets.opTypes(bucketedOverlap).toString());
        assertSame(order, train(bucketedOverlap, merged.startupProgram(), net.loss(), FOUR, 9));
    }

    private static void assertSame(Nets.Trained expected, Nets.Trained actual) {
        assertEquals(expected.losses(), actual.losses());
        assertEquals(expected.params().keySet(), actual.params().keySet());
        expected.params().forEach((name, values) -> assertArrayEquals(values, actual.params().get(name), name));
    }
}
