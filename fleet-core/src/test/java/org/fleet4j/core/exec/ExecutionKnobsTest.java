package org.fleet4j.core.exec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** num_iteration_per_drop_scope and num_iteration_per_run. */
class ExecutionKnobsTest {
    private record Net(Program main, Program startup, Var loss) {
    }

    private static Net mlp() {
        Program main = new Program().setRandomSeed(11);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 6);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(nn.fc(x, 10, "relu"), 3, null), y));
        new SGD(0.2).minimize(loss);
        return new Net(main, startup, loss);
    }

    private static Map<String, Tensor> feed() {
        Tensor x = Tensor.zeros(8, 6);
        Tensor y = Tensor.zeros(DType.I64, 8, 1);
        for (long i = 0; i < x.numel(); i++) {
            x.setFloat(i, (float) Math.sin(i));
        }
        for (long i = 0; i < 8; i++) {
            y.setLong(i, i % 3);
        }
        return Map.of("x", x, "y", y);
    }

    private static float[] params(Net net, Scope scope) {
        List<Float> all = new ArrayList<>();
        for (Var v : net.main().globalBlock().vars()) {
            if (v.isParameter()) {
                for (float f : scope.get(v.name()).toFloatArray()) {
                    all.add(f);
                }
            }
        }
        float[] out = new float[all.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = all.get(i);
        }
        return out;
    }

    @Test
    void temporariesAreReleasedEveryNthIterationAndTrainingIsUnchanged() {
        Net net = mlp();
        Executor plain = new Executor();
        Executor dropping = new Executor(ExecutorOptions.defaults().withIterationsPerDropScope(2));
        Scope a = new Scope();
        Scope b = new Scope();
        plain.run(net.startup(), a);
        dropping.run(net.startup(), b);
        String loss = net.loss().name();
        for (int step = 1; step <= 5; step++) {
            float la = plain.run(net.main(), a, feed(), List.of(loss)).get(loss).getFloat(0);
            float lb = dropping.run(net.main(), b, feed(), List.of(loss)).get(loss).getFloat(0);
            assertEquals(la, lb, "loss of step " + step);
            assertTrue(plain.temporaryBytes(net.main()) > 0);
            if (step % 2 == 0) {
                assertEquals(0, dropping.temporaryBytes(net.main()), "after step " + step + " the temporaries are released");
            } else {
                assertEquals(plain.temporaryBytes(net.main()), dropping.temporaryBytes(net.main()), "step " + step);
            }
        }
        assertArrayEquals(params(net, a), params(net, b));
    }

    @Test
    void oneRunOfThreeIterationsEqualsThreeRuns() {
        Net net = mlp();
        String loss = net.loss().name();
        Executor one = new Executor();
        Scope a = new Scope();
        one.run(net.startup(), a);
        float third = 0;
        for (int i = 0; i < 3; i++) {
            third = one.run(net.main(), a, feed(), List.of(loss)).get(loss).getFloat(0);
        }
        Executor three = new Executor(ExecutorOptions.defaults().withIterationsPerRun(3));
        Scope b = new Scope();
        three.run(net.startup(), b);
        float got = three.run(net.main(), b, feed(), List.of(loss)).get(loss).getFloat(0);
        assertEquals(third, got, "the fetched loss is the third iteration's");
        assertArrayEquals(params(net, a), params(net, b));
    }
}
