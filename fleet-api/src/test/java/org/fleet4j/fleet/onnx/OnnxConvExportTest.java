package org.fleet4j.fleet.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.core.data.MnistDataset;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.models.Classifier;
import org.fleet4j.core.models.LeNet;
import org.fleet4j.core.models.ResNet;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.fleet.InferenceModel;
import org.fleet4j.fleet.InferenceModel.Format;
import org.fleet4j.fleet.onnx.proto.OnnxProto.AttributeProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.ModelProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.NodeProto;
import org.fleet4j.strategy.DistributedStrategy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ONNX export of convolutional programs checked against ONNX Runtime: LeNet and a separable ResNet (batch norm on its
 * running statistics) on the bundled test digits, the padding, stride, dilation, pooling and flatten forms of conv2d,
 * depthwise_conv2d, pool2d and flatten, the refusal of the forms ONNX cannot express, and that the
 * comparison catches pads written in Paddle's order instead of ONNX's.
 */
class OnnxConvExportTest {
    /**
     * Logits of a few units computed in float32 by two convolution implementations differ by summation order only:
     * these programs measure at most 1.4e-6 (the resnet, largest logit 7.9: about 3 float32 ulps of it); 1e-4 leaves
     * room for another CPU while pads in the wrong order change the output's size.
     */
    private static final double TOLERANCE = 1e-4;

    @TempDir
    static Path work;
    private static Fleet fleet;

    @BeforeAll
    static void initFleet() {
        fleet = Fleet.init(Role::single, new DistributedStrategy(), GroupOptions.defaults().withTimeout(
                Duration.ofSeconds(5)), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    }

    @AfterAll
    static void close() {
        fleet.close();
    }

    @Test
    void lenetAgreesWithOnnxRuntimeOnTheTestDigits() throws Exception {
        Classifier lenet = LeNet.build(1, 28, 28, 10, 5);
        assertAgrees("lenet", lenet, initialised(lenet), List.of("Conv", "MaxPool", "Reshape", "MatMul", "Relu"));
    }

    @Test
    void aSeparableResnetWithBatchNormStatisticsAgreesWithOnnxRuntimeOnTheTestDigits() throws Exception {
        Classifier resnet = ResNet.build(1, 28, 28, 10, new ResNet.Shape(8, 4, true), 5);
        Scope scope = initialised(resnet);
        SplittableRandom random = new SplittableRandom(9);
        for (String name : scope.names()) {
            if (name.contains("bn") || name.contains("downsample.1")) {
                Tensor t = scope.get(name);
                for (int i = 0; i < t.numel(); i++) {
                    t.setFloat(i, (float) random.nextDouble(0.5, 1.5));
                }
            }
        }
        assertAgrees("resnet", resnet, scope, List.of("Conv", "BatchNormalization", "GlobalAveragePool", "Add"));
    }

    @Test
    void everyPaddingStrideAndPoolingFormAgreesWithOnnxRuntime() throws Exception {
        Forms forms = Forms.build();
        ModelProto onnx = forms.model().toOnnx();
        List<String> ops = onnx.getGraph().getNodeList().stream().map(NodeProto::getOpType).distinct().toList();
        for (String op : List.of("Conv", "MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool", "Reshape")) {
            assertTrue(ops.contains(op), op + " missing from " + ops);
        }
        for (String out : forms.model().fetches()) {
            float[] expected = forms.model().run(new Executor(), forms.feed()).get(out).toFloatArray();
            float[] got = OnnxExportTest.runOnnx(onnx.toByteArray(), forms.feed(), out);
            assertEquals(expected.length, got.length, out);
            double diff = maxDifference(expected, got);
            System.out.printf(Locale.ROOT, "%s: %d values, max |fleet4j - onnxruntime| %.3g%n", out, got.length, diff);
            assertTrue(diff <= TOLERANCE, out + " differs by " + diff);
        }
    }

    @Test
    void theComparisonCatchesPadsInPaddlesOrder() throws Exception {
        Forms forms = Forms.build();
        ModelProto onnx = forms.model().toOnnx();
        ModelProto.Builder wrong = onnx.toBuilder();
        NodeProto.Builder conv = null;
        int pads = -1;
        for (NodeProto.Builder node : wrong.getGraphBuilder().getNodeBuilderList()) {
            for (int a = 0; a < node.getAttributeCount(); a++) {
                if (node.getOpType().equals("Conv") && node.getAttribute(a).getName().equals("pads")
                        && node.getAttribute(a).getIntsList().equals(List.of(1L, 2L, 0L, 1L))) {
                    conv = node;
                    pads = a;
                }
            }
        }
        assertNotNull(conv, "the conv of paddings [top 1, bottom 0, left 2, right 1] has ONNX pads [1, 2, 0, 1]");
        conv.setAttribute(pads, AttributeProto.newBuilder(conv.getAttribute(pads)).clearInts().addAllInts(
                List.of(1L, 0L, 2L, 1L)));
        float[] expected = forms.model().run(new Executor(), forms.feed()).get(forms.out()).toFloatArray();
        float[] right = OnnxExportTest.runOnnx(onnx.toByteArray(), forms.feed(), forms.out());
        float[] mistaken = OnnxExportTest.runOnnx(wrong.build().toByteArray(), forms.feed(), forms.out());
        double rightDiff = maxDifference(expected, right);
        double wrongDiff = expected.length == mistaken.length ? maxDifference(expected, mistaken)
                : Double.POSITIVE_INFINITY;
        System.out.printf(Locale.ROOT, "pads [1, 2, 0, 1]: max diff %.3g; in Paddle's order [1, 0, 2, 1]: %d values"
                + " instead of %d, max diff %.3g%n", rightDiff, mistaken.length, expected.length, wrongDiff);
        assertTrue(rightDiff <= TOLERANCE, "" + rightDiff);
        assertTrue(wrongDiff > TOLERANCE, "pads in Paddle's order went unnoticed: " + wrongDiff);
    }

    @Test
    void adaptivePoolingToANonDivisorAndAFlattenKeepingAnUnknownDimAreRefusedNamingThem() {
        Program test = new Program();
        Layers nn = new Layers(test, new Program());
        Var pooled = nn.adaptivePool2d(nn.data("x", DType.F32, -1, 2, 8, 8), new int[]{3, 3}, "avg");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new InferenceModel(test, new Scope(), List.of("x"), List.of(pooled.name())).toOnnx());
        assertTrue(e.getMessage().contains("op pool2d (output '" + pooled.name() + "') is adaptive pooling to 3x3"),
                e.getMessage());
        assertTrue(e.getMessage().contains("pool to 1x1 or to a divisor of the input size"), e.getMessage());

        Program flattening = new Program();
        Layers layers = new Layers(flattening, new Program());
        Var flat = layers.flatten(layers.data("y", DType.F32, -1, 2, -1), 0, 1);
        e = assertThrows(IllegalArgumentException.class,
                () -> new InferenceModel(flattening, new Scope(), List.of("y"), List.of(flat.name())).toOnnx());
        assertTrue(e.getMessage().contains("op flatten (output '" + flat.name() + "') keeps dim 2 of [-1, 2, -1], which"
                + " is unknown"), e.getMessage());
    }

    /**
     * One program of every form: explicit [top, bottom, left, right] paddings with stride and dilation, SAME with a
     * stride on an odd size, VALID, a depthwise conv with a channel multiplier, max and exclusive or inclusive average
     * pooling with paddings and ceil mode, adaptive pooling to a divisor and to 1x1, global pooling, flatten.
     */
    private record Forms(InferenceModel model, Map<String, Tensor> feed, String out) {
        static Forms build() {
            Program main = new Program().setRandomSeed(13);
            Program startup = new Program().setRandomSeed(13);
            Layers nn = new Layers(main, startup);
            Var x = nn.data("x", DType.F32, -1, 3, 11, 11);
            Var a = nn.conv2d(x, 4, new int[]{3, 3}, new int[]{1, 2}, new int[]{1, 0, 2, 1}, "EXPLICIT",
                    new int[]{2, 1}, 1, "relu", "explicit", ParamAttr.DEFAULT, ParamAttr.DEFAULT);
            Var s = nn.conv2d(x, 4, new int[]{3, 3}, new int[]{2, 2}, new int[]{0, 0}, "SAME", new int[]{1, 1}, 1,
                    null, "same", ParamAttr.DEFAULT, null);
            Var d = nn.conv2d(s, 8, new int[]{3, 3}, new int[]{1, 1}, new int[]{1, 1}, "EXPLICIT", new int[]{1, 1}, 4,
                    null, "depthwise", ParamAttr.DEFAULT, null);
            Var v = nn.conv2d(d, 4, new int[]{2, 2}, new int[]{1, 1}, new int[]{0, 0}, "VALID", new int[]{1, 1}, 1,
                    null, "valid", ParamAttr.DEFAULT, null);
            Var max = nn.pool2d(a, new int[]{3, 3}, "max", new int[]{2, 2}, new int[]{1, 0, 1, 1}, false, true, true);
            Var exclusive = nn.pool2d(v, new int[]{2, 2}, "avg", new int[]{1, 1}, new int[]{1, 1}, false, false, true);
            Var inclusive = nn.pool2d(v, new int[]{3, 2}, "avg", new int[]{2, 1}, new int[]{1, 0}, false, false, false);
            Var adaptive = nn.adaptivePool2d(nn.conv2d(x, 2, 1, 1, 0, null), new int[]{1, 11}, "max");
            Var global = nn.pool2d(d, new int[]{1, 1}, "max", new int[]{1, 1}, new int[]{0, 0}, true, false, true);
            Var mean = nn.adaptivePool2d(exclusive, new int[]{1, 1}, "avg");
            List<Var> flat = List.of(nn.flatten(max, 1, 3), nn.flatten(inclusive, 0, 1), nn.flatten(adaptive, 2, 3),
                    nn.flatten(global, 1, -1), nn.flatten(mean, 1, 3));
            Var out = nn.concat(List.of(flat.get(0), flat.get(3), flat.get(4)), 1);
            Scope scope = new Scope();
            new Executor().run(startup, scope);
            SplittableRandom random = new SplittableRandom(17);
            float[] xs = new float[2 * 3 * 11 * 11];
            for (int i = 0; i < xs.length; i++) {
                xs[i] = (float) random.nextGaussian();
            }
            List<String> fetches = new ArrayList<>(List.of(out.name()));
            flat.forEach(f -> fetches.add(f.name()));
            return new Forms(new InferenceModel(main, scope, List.of("x"), fetches),
                    Map.of("x", Tensor.of(xs, 2, 3, 11, 11)), out.name());
        }
    }

    private static Scope initialised(Classifier net) {
        Scope scope = new Scope();
        new Executor().run(net.startup(), scope);
        return scope;
    }

    /**
     * The test program's logits on 64 test digits, from the inference models saveInferenceModel wrote (the test
     * program pruned to the logits) in Fleet4J's format, run by the executor, and in ONNX, run by ONNX Runtime.
     */
    private static void assertAgrees(String what, Classifier net, Scope scope, List<String> onnxOps) throws Exception {
        String logits = net.logits().name();
        Path file = work.resolve(what + ".onnx");
        fleet.saveInferenceModel(file, net.test(), List.of("image"), List.of(logits), scope, Format.ONNX);
        Path dir = work.resolve(what);
        fleet.saveInferenceModel(dir, net.test(), List.of("image"), List.of(logits), scope, Format.FLEET4J);
        ModelProto onnx = ModelProto.parseFrom(Files.readAllBytes(file));
        List<String> ops = onnx.getGraph().getNodeList().stream().map(NodeProto::getOpType).distinct().toList();
        for (String op : onnxOps) {
            assertTrue(ops.contains(op), what + ": " + op + " missing from " + ops);
        }
        Tensor images = MnistDataset.bundled(MnistDataset.Split.TEST).images().rows(0, 64).reshape(64, 1, 28, 28);
        Map<String, Tensor> feed = Map.of("image", images);
        float[] expected = Fleet.loadInferenceModel(dir).run(new Executor(), feed).get(logits).toFloatArray();
        float[] got = OnnxExportTest.runOnnx(onnx.toByteArray(), feed, logits);
        assertEquals(64 * 10, got.length, what);
        double diff = maxDifference(expected, got);
        System.out.printf(Locale.ROOT, "%s: max |logit_fleet4j - logit_onnxruntime| over 64 digits x 10: %.3g"
                + " (largest logit %.3g)%n", what, diff, maxAbs(expected));
        assertTrue(diff <= TOLERANCE, what + " logits differ by " + diff);
    }

    private static double maxAbs(float[] a) {
        double max = 0;
        for (float v : a) {
            max = Math.max(max, Math.abs(v));
        }
        return max;
    }

    private static double maxDifference(float[] a, float[] b) {
        double max = 0;
        for (int i = 0; i < a.length; i++) {
            max = Math.max(max, Math.abs((double) a[i] - b[i]));
        }
        return max;
    }
}
