package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.fused.FusedElewiseAddActOp;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FuseElewiseAddActPassTest {
    private final Pass pass = new FuseElewiseAddActPass();

    @Test
    void fusesEveryHiddenLayerForwardAndBackwardAndDropsTheIntermediates() {
        Nets.Net net = Nets.mlp("relu", new int[]{16, 16}, p -> new SGD(0.1));
        Program before = net.main().copy();
        PassResult r = pass.apply(net.main());
        Program after = r.program();

        assertTrue(net.main().sameAs(before), "the pass must not modify its argument");
        assertEquals(2, Nets.count(after, FusedElewiseAddActOp.TYPE));
        assertEquals(2, Nets.count(after, FusedElewiseAddActOp.TYPE + "_grad"));
        assertEquals(0, Nets.count(after, "relu"));
        assertEquals(0, Nets.count(after, "relu_grad"));
        // the output layer's add has no activation and stays, with its grad
        assertEquals(1, Nets.count(after, "elementwise_add"));
        assertEquals(1, Nets.count(after, "elementwise_add_grad"));
        assertEquals(before.globalBlock().ops().size() - 4, after.globalBlock().ops().size());
        assertEquals(before.globalBlock().vars().size() - 4, after.globalBlock().vars().size(),
                "the two sums and their two gradients are gone");
        assertTrue(r.notes().getFirst().startsWith("2 pair(s) fused"), r.notes().toString());
        assertTrue(r.notes().get(1).contains("+ relu -> " + FusedElewiseAddActOp.TYPE), r.notes().toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"relu", "sigmoid", "tanh"})
    void trainsExactlyAsTheUnfusedProgram(String act) {
        Nets.Net net = Nets.mlp(act, new int[]{16, 12}, p -> new Adam(0.01));
        Program fused = pass.apply(net.main()).program();
        assertEquals(0, Nets.count(fused, act));
        Same.runs(Nets.train(net.main(), net.startup(), net.loss(), 12),
                Nets.train(fused, net.startup(), net.loss(), 12), 1e-6f);
    }

    @Test
    void fusesScaleWithItsAttributes() {
        Program main = new Program().setRandomSeed(3);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var w = nn.createParameter("w", DType.F32, new long[]{8, 3}, org.fleet4j.core.layers.Initializer.xavierUniform());
        Var b = nn.createParameter("b", DType.F32, new long[]{3}, org.fleet4j.core.layers.Initializer.constant(0.1f));
        Var h = nn.scale(nn.add(nn.matmul(x, w), b), 0.5f, 0.25f);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(h, y));
        new SGD(0.5).minimize(loss);
        Program fused = pass.apply(main).program();
        assertEquals(1, Nets.count(fused, FusedElewiseAddActOp.TYPE));
        assertEquals(0, Nets.count(fused, "scale"));
        Same.runs(Nets.train(main, startup, loss.name(), 8), Nets.train(fused, startup, loss.name(), 8), 1e-6f);
    }

    @Test
    void leavesAnAddAloneWhenItsSumIsUsedElsewhere() {
        Program main = new Program().setRandomSeed(3);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var b = nn.createParameter("b", DType.F32, new long[]{8}, org.fleet4j.core.layers.Initializer.constant(0.1f));
        Var sum = nn.add(x, b);
        Var loss = nn.add(nn.mean(nn.relu(sum)), nn.mean(sum));
        new SGD(0.5).minimize(loss);
        PassResult r = pass.apply(main);
        assertSame(main, r.program(), "nothing to fuse: the same program comes back");
        assertTrue(r.notes().getFirst().startsWith("nothing fused"), r.notes().toString());
    }

    @Test
    void explainsWhyABroadcastItCannotFuseStaysApart() {
        Program main = new Program().setRandomSeed(3);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var b = nn.createParameter("b", DType.F32, new long[]{1, 8}, org.fleet4j.core.layers.Initializer.constant(0.1f));
        new SGD(0.5).minimize(nn.mean(nn.relu(nn.add(x, b))));
        PassResult r = pass.apply(main);
        assertSame(main, r.program());
        assertTrue(r.notes().stream().anyMatch(n -> n.contains("neither X's shape [-1, 8] nor its trailing dimensions")),
                r.notes().toString());
        assertFalse(Nets.opTypes(r.program()).contains(FusedElewiseAddActOp.TYPE));
    }

    @Test
    void fusesAnInferenceProgramWithoutBackward() {
        Program main = new Program().setRandomSeed(3);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var out = nn.fc(nn.data("x", DType.F32, -1, 8), 4, "tanh");
        Program fused = pass.apply(main).program();
        assertEquals(List.of("matmul", FusedElewiseAddActOp.TYPE), Nets.opTypes(fused));
        assertEquals(out.name(), fused.globalBlock().ops().getLast().out("Out"));
    }
}
