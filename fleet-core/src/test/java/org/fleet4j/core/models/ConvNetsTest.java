package org.fleet4j.core.models;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.ModelState;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.io.TorchStateDict;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** LeNet-5 and the small ResNet: their layers and names, their test programs, and the refusal of shapes that do not fit. */
class ConvNetsTest {
    private static long[] shape(Program p, String var) {
        return p.globalBlock().var(var).shape();
    }

    @Test
    void leNetHasPyTorchsLayerNamesAndShapesOn28x28Digits() {
        ConvNet net = LeNet.build(1, 28, 28, 10, 1);
        assertEquals(List.of("conv1.w_0", "conv1.b_0", "conv2.w_0", "conv2.b_0", "fc1.w_0", "fc1.b_0", "fc2.w_0",
                "fc2.b_0", "fc3.w_0", "fc3.b_0"), ModelState.names(net.main()));
        assertArrayEquals(new long[]{6, 1, 5, 5}, shape(net.main(), "conv1.w_0"));
        assertArrayEquals(new long[]{400, 120}, shape(net.main(), "fc1.w_0"), "16 x 5 x 5 features after conv2");
        assertArrayEquals(new long[]{-1, 1, 28, 28}, net.image().shape());
    }

    @Test
    void resNetHasTorchvisionsNamesAProjectionWhereTheShapeChangesAndATestProgramOnRunningStatistics() {
        ConvNet net = ResNet.build(1, 28, 28, 10, new ResNet.Shape(8, 4, false), 1);
        List<String> names = ModelState.names(net.main());
        for (String n : List.of("conv1.w_0", "bn1.w_0", "bn1.w_1", "bn1.w_2", "layer1.0.conv1.w_0", "layer1.0.bn2.b_0",
                "layer2.0.downsample.0.w_0", "layer3.0.downsample.1.w_2", "fc.w_0", "fc.b_0")) {
            assertTrue(names.contains(n), n + " in " + names);
        }
        assertTrue(names.stream().noneMatch(n -> n.startsWith("layer1.0.downsample") || n.startsWith("conv1.b_")),
                "no projection where the shape stays; no bias before batch norm: " + names);
        assertArrayEquals(new long[]{16, 8, 3, 3}, shape(net.main(), "layer3.0.conv1.w_0"));
        assertEquals(9, count(net.main(), "batch_norm", false), "stem, 2 in each of 3 blocks, 2 projections");
        assertEquals(9, count(net.test(), "batch_norm", true));
        assertEquals(0, count(net.test(), "batch_norm", false));
    }

    @Test
    void theirWeightsPairByLayerNameWithThoseOfTheSamePyTorchModules(@TempDir Path dir) {
        ConvNet net = ResNet.build(1, 28, 28, 10, new ResNet.Shape(8, 4, true), 1);
        ConvNet lenet = LeNet.build(1, 28, 28, 10, 1);
        Scope scope = new Scope();
        Scope lenetScope = new Scope();
        try (Executor exe = new Executor()) {
            exe.run(net.startup(), scope);
            exe.run(lenet.startup(), lenetScope);
        }
        TorchStateDict.byLayerNames(net.test()).save(dir.resolve("resnet.safetensors"), scope);
        TorchStateDict.byLayerNames(lenet.test()).save(dir.resolve("lenet.safetensors"), lenetScope);
        Set<String> resnet = SafeTensors.read(dir.resolve("resnet.safetensors")).keySet();
        for (String n : List.of("conv1.weight", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var",
                "bn1.num_batches_tracked", "layer1.0.conv1.0.weight", "layer1.0.conv1.1.weight",
                "layer2.0.downsample.0.weight", "layer2.0.downsample.1.running_var", "fc.weight", "fc.bias")) {
            assertTrue(resnet.contains(n), n + " in " + resnet);
        }
        assertTrue(resnet.stream().noneMatch(n -> n.contains(".w_") || n.contains(".b_")), "every weight renamed: " + resnet);
        assertEquals(Set.of("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight", "fc1.bias",
                "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"), SafeTensors.read(dir.resolve("lenet.safetensors")).keySet());
    }

    @Test
    void theDepthwiseVariantSeparatesEveryBlockConvolution() {
        ConvNet net = ResNet.build(1, 28, 28, 10, new ResNet.Shape(14, 4, true), 1);
        long depthwise = net.main().globalBlock().ops().stream().filter(o -> o.type().equals("depthwise_conv2d")).count();
        assertEquals(12, depthwise, "2 per block, 2 blocks per stage");
        assertArrayEquals(new long[]{8, 1, 3, 3}, shape(net.main(), "layer2.1.conv2.0.w_0"));
        assertArrayEquals(new long[]{8, 8, 1, 1}, shape(net.main(), "layer2.1.conv2.1.w_0"));
    }

    @Test
    void theTestProgramComputesWhatTheTrainingProgramComputesInTestMode() {
        ConvNet net = ResNet.build(1, 12, 12, 10, new ResNet.Shape(8, 2, true), 3);
        Scope scope = new Scope();
        Tensor images = Tensor.zeros(DType.F32, 4, 1, 12, 12);
        for (long i = 0; i < images.numel(); i++) {
            images.setFloat(i, (float) Math.sin(i));
        }
        Tensor labels = Tensor.zeros(DType.I64, 4, 1);
        try (Executor exe = new Executor()) {
            exe.run(net.startup(), scope);
            Map<String, Tensor> feed = Map.of("image", images, "label", labels);
            float train = exe.run(net.main(), scope, feed, List.of(net.loss().name())).get(net.loss().name()).getFloat(0);
            float test = exe.run(net.test(), scope, feed, List.of(net.loss().name())).get(net.loss().name()).getFloat(0);
            assertTrue(Float.isFinite(train) && Float.isFinite(test) && train != test,
                    "batch statistics in training, running ones in test: " + train + ", " + test);
        }
    }

    @Test
    void aKernelLargerThanItsPaddedInputNamesTheLayerTheSizesAndTheFix() {
        IrException e = assertThrows(IrException.class, () -> LeNet.build(1, 8, 8, 10, 1));
        assertTrue(e.getMessage().startsWith("conv2d layer conv2 on "), e.getMessage());
        assertTrue(e.getMessage().contains("[-1, 6, 4, 4]: op #"), e.getMessage());
        assertTrue(e.getMessage().endsWith("the kernel's height 5 is larger than the padded input's 4 (4 + paddings 0"
                + " and 0); use a smaller kernel or dilation, or more padding"), e.getMessage());
    }

    @Test
    void groupsThatDoNotDivideTheChannelsNameTheLayerTheValuesAndTheFix() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 6, 8, 8);
        IrException e = assertThrows(IrException.class, () -> nn.conv2d(x, 8, new int[]{3, 3}, new int[]{1, 1},
                new int[]{1, 1}, "EXPLICIT", new int[]{1, 1}, 4, null, "block.conv", ParamAttr.DEFAULT, null));
        assertEquals("conv2d layer block.conv on x [-1, 6, 8, 8]: groups 4 must divide the input's 6 channels and the 8"
                + " filters; use a common divisor of both (1 for an ordinary convolution, 6 for a depthwise one with a"
                + " multiple of 6 filters)", e.getMessage());
    }

    @Test
    void aDepthThatIsNot6nPlus2IsRefusedWithTheDepthsThatWork() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ResNet.Shape(10, 16, false));
        assertTrue(e.getMessage().startsWith("ResNet depth 10 is not 6n + 2") && e.getMessage().endsWith("use 8, 14, 20, 32, ..."),
                e.getMessage());
    }

    private static long count(Program p, String type, boolean isTest) {
        return p.globalBlock().ops().stream().filter(o -> o.type().equals(type) && o.boolAttr("is_test") == isTest).count();
    }
}
