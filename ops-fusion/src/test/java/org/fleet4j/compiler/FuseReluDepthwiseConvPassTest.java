package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.models.ConvNet;
import org.fleet4j.core.models.ResNet;
import org.fleet4j.core.ops.fused.FusedReluDepthwiseConvOp;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.Test;

class FuseReluDepthwiseConvPassTest {
    private final Pass pass = new FuseReluDepthwiseConvPass();

    private record Built(Program main, Program startup, String loss) {
    }

    /** x [-1, 8] as [-1, 2, 2, 2] -> conv 4 -> relu -> depthwise 3x3 (multiplier 2) -> fc 3, read also by {@code alsoReadRelu}. */
    private static Built net(boolean alsoReadRelu) {
        Program main = new Program().setRandomSeed(9);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.reshape(nn.data("x", DType.F32, -1, 8), -1, 2, 2, 2);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var r = nn.relu(nn.conv2d(x, 4, 3, 1, 1, null));
        Var h = nn.conv2d(r, 8, new int[]{3, 3}, new int[]{1, 1}, new int[]{1, 1}, "EXPLICIT", new int[]{1, 1}, 4, null,
                null, ParamAttr.DEFAULT, null);
        Var logits = nn.fc(h, 3, null);
        if (alsoReadRelu) {
            logits = nn.add(logits, nn.fc(r, 3, null));
        }
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(logits, y));
        new Momentum(0.05, 0.9f).minimize(loss);
        return new Built(main, startup, loss.name());
    }

    @Test
    void reluAndTheDepthwiseConvolutionThatReadsItBecomeOneOpForwardAndBackward() {
        Built b = net(false);
        PassResult r = pass.apply(b.main());
        Program p = r.program();
        assertEquals(1, Nets.count(p, FusedReluDepthwiseConvOp.TYPE));
        assertEquals(1, Nets.count(p, FusedReluDepthwiseConvOp.TYPE + "_grad"));
        assertEquals(0, Nets.count(p, "relu") + Nets.count(p, "relu_grad") + Nets.count(p, "depthwise_conv2d")
                + Nets.count(p, "depthwise_conv2d_grad"));
        assertEquals(b.main().globalBlock().vars().size() - 2, p.globalBlock().vars().size(),
                "the relu's output and its gradient are gone");
        assertTrue(r.notes().get(1).startsWith("fused relu("), r.notes().toString());
    }

    @Test
    void trainsBitForBitAsTheUnfusedProgram() {
        Built b = net(false);
        Program fused = pass.apply(b.main()).program();
        Same.runs(Nets.train(b.main(), b.startup(), b.loss(), 10), Nets.train(fused, b.startup(), b.loss(), 10), 0f);
    }

    @Test
    void aReluThatSomethingElseAlsoReadsIsLeftAlone() {
        Built b = net(true);
        PassResult r = pass.apply(b.main());
        assertSame(b.main(), r.program());
        assertTrue(r.notes().getFirst().startsWith("nothing fused"), r.notes().toString());
    }

    /**
     * In the separable ResNet the relu inside each block feeds only its depthwise convolution; the relu after a block
     * also feeds the shortcut and stays. Under fuse_bn_act_ops as well, the relu goes into the convolution and the
     * other batch_norm - relu pairs into fused_bn_activation.
     */
    @Test
    void theSeparableResNetFusesTheReluInsideEachBlockUnderTheStrategyKnob() {
        ConvNet net = ResNet.build(1, 8, 8, 10, new ResNet.Shape(14, 2, true), 1);
        new Momentum(0.05, 0.9f).minimize(net.loss());
        DistributedStrategy s = new DistributedStrategy().set(StrategySchema.BUILD_FUSE_RELU_DEPTHWISE_CONV, true)
                .set(StrategySchema.BUILD_FUSE_BN_ACT_OPS, true);
        EffectiveStrategy effective = EffectiveStrategy.resolve(s, new World(1, 1, "cpu"));
        assertEquals(List.of("fuse_relu_depthwise_conv", "fuse_bn_act_ops"), Pipeline.passNames(effective));
        Program p = Pipeline.forStrategy(effective).run(net.main()).program();
        assertEquals(6, Nets.count(p, FusedReluDepthwiseConvOp.TYPE), "one per block, 2 blocks in each of 3 stages");
        assertEquals(6, Nets.count(p, FusedReluDepthwiseConvOp.TYPE + "_grad"));
        assertEquals(6, Nets.count(p, "depthwise_conv2d"), "the blocks' first convolutions read a relu the shortcut reads too");
        assertEquals(1, Nets.count(p, "fused_bn_activation"), "the stem's; the blocks' bn1 lost their relu to the convolution");
    }
}
