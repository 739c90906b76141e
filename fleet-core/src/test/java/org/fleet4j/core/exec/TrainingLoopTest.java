package org.fleet4j.core.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

class TrainingLoopTest {

    /** Two Gaussian blobs per class in 8 dims: learnable to near-perfect accuracy by a small MLP. */
    private static Tensor[] blobs(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] x = new float[n * 8];
        long[] y = new long[n];
        for (int i = 0; i < n; i++) {
            int c = r.nextInt(3);
            y[i] = c;
            for (int j = 0; j < 8; j++) {
                x[i * 8 + j] = (float) ((j % 3 == c ? 2.0 : 0.0) + 0.5 * (r.nextDouble() - 0.5));
            }
        }
        return new Tensor[]{Tensor.of(x, n, 8), Tensor.ofLongs(y, n, 1)};
    }

    private record Net(Program main, Program startup, Var loss, Var acc) {
    }

    private static Net build(Optimizer opt) {
        Program main = new Program().setRandomSeed(7);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var logits = nn.fc(nn.fc(x, 16, "relu"), 3, null);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(logits, y));
        Var acc = nn.accuracy(logits, y);
        opt.minimize(loss);
        return new Net(main, startup, loss, acc);
    }

    private static float[] train(Optimizer opt, int steps) {
        Net net = build(opt);
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(net.startup(), scope);
        Tensor[] data = blobs(64, 1);
        float first = Float.NaN;
        float last = Float.NaN;
        float acc = 0;
        for (int s = 0; s < steps; s++) {
            Map<String, Tensor> out = exe.run(net.main(), scope, Map.of("x", data[0], "y", data[1]),
                    List.of(net.loss().name(), net.acc().name()));
            last = out.get(net.loss().name()).getFloat(0);
            acc = out.get(net.acc().name()).getFloat(0);
            if (s == 0) {
                first = last;
            }
        }
        return new float[]{first, last, acc};
    }

    @Test
    void sgdMomentumAndAdamAllLearnASeparableTask() {
        for (Optimizer opt : new Optimizer[]{new SGD(0.5), new Momentum(0.1, 0.9f), new Adam(0.01)}) {
            float[] r = train(opt, 60);
            assertTrue(r[1] < r[0] * 0.2, opt.name() + ": loss went from " + r[0] + " to " + r[1]);
            assertEquals(1.0f, r[2], 0.05f, opt.name() + " accuracy");
        }
    }

    @Test
    void sameSeedGivesTheSameParameters() {
        float[] a = train(new SGD(0.5), 5);
        float[] b = train(new SGD(0.5), 5);
        assertEquals(a[1], b[1]);
    }

    @Test
    void temporariesAreReusedAcrossSteps() {
        Net net = build(new SGD(0.1));
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(net.startup(), scope);
        Tensor[] data = blobs(32, 2);
        exe.run(net.main(), scope, Map.of("x", data[0], "y", data[1]), List.of());
        Tensor w = scope.get("fc_0.w_0");
        Plan plan = getPlan(exe, net.main());
        Object[] before = plan.frame.clone();
        exe.run(net.main(), scope, Map.of("x", data[0], "y", data[1]), List.of());
        for (int i = 0; i < before.length; i++) {
            if (before[i] != null && !plan.names[i].equals("x") && !plan.names[i].equals("y")) {
                assertSame(before[i], plan.frame[i], "buffer of " + plan.names[i] + " was reallocated");
            }
        }
        assertSame(w, scope.get("fc_0.w_0"), "parameters are updated in place");
    }

    private static Plan getPlan(Executor exe, Program p) {
        try {
            var f = Executor.class.getDeclaredField("plans");
            f.setAccessible(true);
            return ((Map<Program, Plan>) f.get(exe)).get(p);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void badFeedsAndFetchesAreNamed() {
        Net net = build(new SGD(0.1));
        Executor exe = new Executor();
        Scope scope = new Scope();
        Tensor[] data = blobs(4, 3);
        var e0 = assertThrows(ExecutionException.class,
                () -> exe.run(net.main(), scope, Map.of("x", data[0], "y", data[1]), List.of()));
        assertTrue(e0.getMessage().contains("run the startup program first"), e0.getMessage());
        exe.run(net.startup(), scope);
        var e1 = assertThrows(ExecutionException.class,
                () -> exe.run(net.main(), scope, Map.of("x", Tensor.zeros(4, 9), "y", data[1]), List.of()));
        assertTrue(e1.getMessage().contains("feed 'x' has shape [4, 9], the program expects [-1, 8]"), e1.getMessage());
        var e2 = assertThrows(ExecutionException.class,
                () -> exe.run(net.main(), scope, Map.of("x", data[0], "y", data[1].to(DType.F32)), List.of()));
        assertTrue(e2.getMessage().contains("feed 'y' has dtype float32, the program expects int64"), e2.getMessage());
        var e3 = assertThrows(RuntimeException.class,
                () -> exe.run(net.main(), scope, Map.of("x", data[0], "y", data[1]), List.of("fc_0.w_O")));
        assertTrue(e3.getMessage().contains("no var named 'fc_0.w_O'") && e3.getMessage().contains("fc_0.w_0"),
                e3.getMessage());
        var e4 = assertThrows(ExecutionException.class,
                () -> exe.run(net.main(), scope, Map.of("x", data[0]), List.of()));
        assertTrue(e4.getMessage().contains("data var 'y'"), e4.getMessage());
    }
}
