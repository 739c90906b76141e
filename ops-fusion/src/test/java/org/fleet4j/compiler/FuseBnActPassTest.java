package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.fused.FusedBnActOp;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;

class FuseBnActPassTest {
    private final Pass pass = new FuseBnActPass();

    private record Built(Program main, Program startup, String loss) {
    }

    /** x [-1, 8] -> fc 12 -> batch_norm -> relu -> fc 3 -> softmax cross-entropy. */
    private static Built net(boolean reluAfterBn) {
        Program main = new Program().setRandomSeed(9);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = nn.batchNorm(nn.fc(x, 12, null), false);
        if (reluAfterBn) {
            h = nn.relu(h);
        } else {
            h = nn.tanh(h);
        }
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(h, 3, null), y));
        new Momentum(0.05, 0.9f).minimize(loss);
        return new Built(main, startup, loss.name());
    }

    @Test
    void batchNormAndReluBecomeOneOpForwardAndBackward() {
        Built b = net(true);
        PassResult r = pass.apply(b.main());
        Program p = r.program();
        assertEquals(1, Nets.count(p, FusedBnActOp.TYPE));
        assertEquals(1, Nets.count(p, FusedBnActOp.TYPE + "_grad"));
        assertEquals(0, Nets.count(p, "batch_norm") + Nets.count(p, "batch_norm_grad") + Nets.count(p, "relu")
                + Nets.count(p, "relu_grad"));
        assertEquals(b.main().globalBlock().vars().size() - 2, p.globalBlock().vars().size(),
                "the normalised tensor and its gradient are gone");
        assertTrue(r.notes().get(1).startsWith("fused batch_norm("), r.notes().toString());
    }

    @Test
    void trainsExactlyAsTheUnfusedProgramRunningStatisticsIncluded() {
        Built b = net(true);
        Program fused = pass.apply(b.main()).program();
        Nets.Trained plain = Nets.train(b.main(), b.startup(), b.loss(), 10);
        Nets.Trained compiled = Nets.train(fused, b.startup(), b.loss(), 10);
        Same.runs(plain, compiled, 1e-6f);
    }

    @Test
    void nchwBatchNormAfterAConvTrainsExactlyAsUnfused() {
        Program main = new Program().setRandomSeed(9);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.reshape(nn.data("x", DType.F32, -1, 8), -1, 2, 2, 2);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = nn.relu(nn.batchNorm(nn.conv2d(x, 3, 3, 1, 1, null), false));
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(h, 3, null), y));
        new Momentum(0.05, 0.9f).minimize(loss);
        Program fused = pass.apply(main).program();
        assertEquals(1, Nets.count(fused, FusedBnActOp.TYPE));
        Same.runs(Nets.train(main, startup, loss.name(), 10), Nets.train(fused, startup, loss.name(), 10), 1e-6f);
    }

    @Test
    void batchNormFollowedByAnotherActivationIsLeftAlone() {
        Built b = net(false);
        PassResult r = pass.apply(b.main());
        assertSame(b.main(), r.program());
        assertTrue(r.notes().getFirst().startsWith("nothing fused"), r.notes().toString());
    }
}
