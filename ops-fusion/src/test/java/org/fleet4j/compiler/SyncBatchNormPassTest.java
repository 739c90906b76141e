package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.fused.SyncBatchNormOps;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;

class SyncBatchNormPassTest {
    private final Pass pass = new SyncBatchNormPass();

    /** x [-1, 8] -> fc 12 -> batch_norm -> relu -> fc 3 -> softmax cross-entropy, SGD. */
    static Nets.Net bnNet(boolean isTest) {
        StandInAllreduce.register();
        Program main = new Program().setRandomSeed(9);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = nn.relu(nn.batchNorm(nn.fc(x, 12, null), isTest));
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(h, 3, null), y));
        new SGD(0.2).minimize(loss);
        return new Nets.Net(main, startup, loss.name());
    }

    /** x [-1, 8] as [N, 2, 2, 2] -> conv2d 3 filters 3x3 -> batch_norm over N, H, W -> relu -> fc 3, SGD. */
    static Nets.Net convBnNet() {
        StandInAllreduce.register();
        Program main = new Program().setRandomSeed(9);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.reshape(nn.data("x", DType.F32, -1, 8), -1, 2, 2, 2);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = nn.relu(nn.batchNorm(nn.conv2d(x, 3, 3, 1, 1, null), false));
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(h, 3, null), y));
        new SGD(0.2).minimize(loss);
        return new Nets.Net(main, startup, loss.name());
    }

    @Test
    void twoEqualRanksNormaliseAsOneOverBatchAndPixels() {
        Nets.Net net = convBnNet();
        PassResult r = pass.apply(net.main());
        assertEquals(1, Nets.count(r.program(), SyncBatchNormOps.APPLY), r.notes().toString());
        Same.runs(Nets.train(net.main(), net.startup(), net.loss(), 8), Nets.train(r.program(), net.startup(), net.loss(), 8),
                2e-5f);
    }

    @Test
    void statisticsAndTheirGradientSumsAreAllreducedAroundTheNormalisation() {
        PassResult r = pass.apply(bnNet(false).main());
        List<String> types = Nets.opTypes(r.program());
        int stats = types.indexOf(SyncBatchNormOps.STATS);
        assertEquals(List.of(SyncBatchNormOps.STATS, "c_allreduce", SyncBatchNormOps.APPLY), types.subList(stats, stats + 3));
        int grad = types.indexOf(SyncBatchNormOps.GRAD_STATS);
        assertEquals(List.of(SyncBatchNormOps.GRAD_STATS, "c_allreduce", SyncBatchNormOps.GRAD_APPLY),
                types.subList(grad, grad + 3));
        assertEquals(0, Nets.count(r.program(), "batch_norm") + Nets.count(r.program(), "batch_norm_grad"));
        assertTrue(r.notes().getFirst().contains("takes its statistics over all ranks"), r.notes().toString());
    }

    @Test
    void twoEqualRanksNormaliseAsOne() {
        // the stand-in allreduce doubles every sum, as two ranks holding the same batch would: counts double too,
        // so means, variances and gradients must come out as one process computes them
        Nets.Net net = bnNet(false);
        Program synced = pass.apply(net.main()).program();
        Same.runs(Nets.train(net.main(), net.startup(), net.loss(), 8), Nets.train(synced, net.startup(), net.loss(), 8), 2e-5f);
    }

    @Test
    void inferenceBatchNormIsLeftAlone() {
        Nets.Net net = bnNet(true);
        PassResult r = pass.apply(net.main());
        assertSame(net.main(), r.program());
    }
}
