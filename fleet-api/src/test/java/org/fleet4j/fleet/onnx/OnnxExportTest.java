package org.fleet4j.fleet.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.core.data.MnistDataset;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Initializer;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.fleet.InferenceModel.Format;
import org.fleet4j.fleet.InferenceModel;
import org.fleet4j.fleet.onnx.proto.OnnxProto.ModelProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.TensorProto;
import org.fleet4j.strategy.DistributedStrategy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ONNX export checked against ONNX Runtime: the MNIST MLP on the bundled test digits, every op the layers emit, the
 * refusal of ops with no ONNX form, and that the comparison does catch a wrong model.
 */
class OnnxExportTest {
    /**
     * Probabilities in [0, 1] computed in float32 by two GEMM implementations differ by summation order only: the MNIST
     * test measures 6.3e-7 (about 5 float32 ulps of 1, an ulp being 1.2e-7), so 1e-5 leaves room for another BLAS or
     * CPU while a real mistake (the transposed weight below) shows differences near 1.
     */
    private static final double TOLERANCE = 1e-5;
    private static final GroupOptions QUICK = GroupOptions.defaults().withTimeout(Duration.ofSeconds(5));

    @TempDir
    static Path work;
    private static Fleet fleet;
    private static Mnist mnist;

    /** The MLP of the mnist program (784-512-512-10, ReLU) after a few training steps, with softmax probabilities. */
    private record Mnist(Program test, Scope scope, Var probabilities, MnistDataset digits) {
    }

    @BeforeAll
    static void trainMnist() {
        fleet = Fleet.init(Role::single, new DistributedStrategy(), QUICK,
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        Program main = new Program().setRandomSeed(3);
        Program startup = new Program().setRandomSeed(3);
        Layers nn = new Layers(main, startup);
        Var image = nn.data("image", DType.F32, -1, 784);
        Var label = nn.data("label", DType.I64, -1, 1);
        Var logits = nn.fc(nn.fc(nn.fc(image, 512, "relu"), 512, "relu"), 10, null);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(logits, label));
        Program test = main.copy();
        Var probabilities = new Layers(test, new Program()).softmax(test.globalBlock().var(logits.name()));
        fleet.distributedOptimizer(new Momentum(0.05, 0.9f)).minimize(loss);
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(startup, scope);
        MnistDataset train = MnistDataset.bundled(MnistDataset.Split.TRAIN);
        for (int step = 0; step < 20; step++) {
            exe.run(main, scope, Map.of("image", train.images().rows(step * 64L, step * 64L + 64),
                    "label", train.labels().rows(step * 64L, step * 64L + 64)), List.of(loss.name()));
        }
        mnist = new Mnist(test, scope, probabilities, MnistDataset.bundled(MnistDataset.Split.TEST));
    }

    @AfterAll
    static void close() {
        fleet.close();
    }

    @Test
    void onnxRuntimeGivesFleet4jsPredictionsAndProbabilitiesOnTheMnistTestDigits() throws Exception {
        List<String> fetches = List.of(mnist.probabilities().name());
        Path file = work.resolve("mnist.onnx");
        fleet.saveInferenceModel(file, mnist.test(), List.of("image"), fetches, mnist.scope(), Format.ONNX);
        ModelProto onnx = ModelProto.parseFrom(Files.readAllBytes(file));
        assertEquals(8, onnx.getIrVersion(), "IR version 8, as opset 17 came with (ONNX 1.12)");
        assertEquals(1, onnx.getOpsetImportCount());
        assertEquals("", onnx.getOpsetImport(0).getDomain(), "the default ONNX domain");
        assertEquals(17, onnx.getOpsetImport(0).getVersion());
        Path dir = work.resolve("mnist-fleet4j");
        fleet.saveInferenceModel(dir, mnist.test(), List.of("image"), fetches, mnist.scope(), Format.FLEET4J);

        Tensor images = mnist.digits().images();
        float[] expected = Fleet.loadInferenceModel(dir).run(new Executor(), Map.of("image", images))
                .get(mnist.probabilities().name()).toFloatArray();
        float[] got = runOnnx(Files.readAllBytes(file), Map.of("image", images), mnist.probabilities().name());

        assertEquals(expected.length, got.length);
        int digits = (int) images.dim(0);
        assertEquals(mnist.digits().size(), digits);
        assertEquals(0, differentPredictions(expected, got), "predictions of Fleet4J and ONNX Runtime differ");
        double diff = maxDifference(expected, got);
        System.out.printf(Locale.ROOT, "max |p_fleet4j - p_onnxruntime| over %d digits x 10 classes: %.3g%n", digits, diff);
        assertTrue(diff <= TOLERANCE, "probabilities differ by " + diff);
        assertTrue(correct(expected, mnist.digits().labels()) > 0.8 * digits, "the few training steps did not train");
    }

    @Test
    void theComparisonCatchesAWronglyTransposedWeight() throws Exception {
        Path dir = work.resolve("transposed-check");
        fleet.saveInferenceModel(dir, mnist.test(), List.of("image"), List.of(mnist.probabilities().name()),
                mnist.scope());
        // a model in hand (here loaded back) writes itself in either format
        Path file = work.resolve("transposed-check.onnx");
        Fleet.loadInferenceModel(dir).save(file, Format.ONNX);
        Path copy = work.resolve("transposed-check-copy");
        Fleet.loadInferenceModel(dir).save(copy, Format.FLEET4J);
        InferenceModel model = Fleet.loadInferenceModel(copy);
        ModelProto onnx = ModelProto.parseFrom(Files.readAllBytes(file));
        ModelProto.Builder wrong = onnx.toBuilder();
        int w = -1;
        for (int i = 0; i < onnx.getGraph().getInitializerCount(); i++) {
            if (onnx.getGraph().getInitializer(i).getName().equals("fc_1.w_0")) {
                w = i;
            }
        }
        TensorProto square = onnx.getGraph().getInitializer(w);
        assertEquals(List.of(512L, 512L), square.getDimsList());
        wrong.getGraphBuilder().setInitializer(w, square.toBuilder().setRawData(transposed(square.getRawData(), 512)));

        Tensor images = mnist.digits().images();
        float[] expected = model.run(new Executor(), Map.of("image", images)).get(mnist.probabilities().name())
                .toFloatArray();
        float[] right = runOnnx(onnx.toByteArray(), Map.of("image", images), mnist.probabilities().name());
        float[] mistaken = runOnnx(wrong.build().toByteArray(), Map.of("image", images), mnist.probabilities().name());
        double rightDiff = maxDifference(expected, right);
        double wrongDiff = maxDifference(expected, mistaken);
        System.out.printf(Locale.ROOT, "right model: max diff %.3g; fc_1.w_0 transposed: max diff %.3g, %d of %d"
                + " predictions differ%n", rightDiff, wrongDiff, differentPredictions(expected, mistaken), images.dim(0));
        assertTrue(rightDiff <= TOLERANCE, "" + rightDiff);
        assertTrue(wrongDiff > 1e-2, "a transposed weight went unnoticed: " + wrongDiff);
        assertTrue(differentPredictions(expected, mistaken) > 0);
    }

    @Test
    void everyOpTheLayersEmitAgreesWithOnnxRuntime() throws Exception {
        Program main = new Program().setRandomSeed(11);
        Program startup = new Program().setRandomSeed(11);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 6);
        Var ids = nn.data("ids", DType.I64, -1, 1);
        Var h = nn.batchNorm(nn.fc(x, 8, "tanh"), true);
        h = nn.dropout(h, 0.3f, true);
        h = nn.op("dropout", Map.of("X", List.of(h.name())), List.of("Out", "Mask"), Map.of("dropout_prob", 0.25f,
                "is_test", true, "dropout_implementation", "downgrade_in_infer"))[0];
        Var e = nn.embedding(ids, 20, 4, false);
        Var joined = nn.concat(List.of(h, e), 1);
        Var grid = nn.reshape(joined, 0, 3, 4);
        Var channelBias = nn.createParameter("channel_bias", DType.F32, new long[]{3}, Initializer.xavierUniform());
        Var shifted = nn.op("elementwise_add", Map.of("X", List.of(grid.name()), "Y", List.of(channelBias.name())),
                List.of("Out"), Map.of("axis", 1))[0];
        Var flat = nn.reshape(nn.gelu(shifted), -1, 12);
        Var s = nn.scale(nn.fc(flat, 12, "sigmoid"), 2f, -0.5f);
        Var image = nn.reshape(s, -1, 2, 2, 3);
        Map<String, List<String>> bnInputs = Map.of("X", List.of(image.name()),
                "Scale", List.of(nn.createParameter("nhwc.w_0", DType.F32, new long[]{3}, Initializer.constant(1.5f)).name()),
                "Bias", List.of(nn.createParameter("nhwc.b_0", DType.F32, new long[]{3}, Initializer.constant(-0.5f)).name()),
                "Mean", List.of(nn.createPersistable("nhwc.w_1", DType.F32, new long[]{3}, 0.3f).name()),
                "Variance", List.of(nn.createPersistable("nhwc.w_2", DType.F32, new long[]{3}, 0.7f).name()));
        Var channelsLast = nn.op("batch_norm", bnInputs, List.of("Y", "MeanOut", "VarianceOut", "SavedMean",
                "SavedVariance"), Map.of("is_test", true, "data_layout", "NHWC", "epsilon", 1e-3f))[0];
        Var both = nn.sum(List.of(nn.reshape(channelsLast, -1, 12), flat));
        Var bias = nn.createParameter("row_bias", DType.F32, new long[]{12}, Initializer.constant(0.25f));
        Var product = nn.matmul(both, nn.createParameter("square", DType.F32, new long[]{12, 12},
                Initializer.xavierUniform()), false, true, 0.5f);
        Var probabilities = nn.softmax(nn.sub(nn.mul(product, both), nn.div(product, nn.add(nn.relu(both), bias))));
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(startup, scope);
        SplittableRandom random = new SplittableRandom(7);
        for (String stat : List.of("batch_norm_0.w_1", "batch_norm_0.w_2")) {
            Tensor t = scope.get(stat);
            for (int i = 0; i < t.numel(); i++) {
                t.setFloat(i, (float) (stat.endsWith("1") ? random.nextDouble(-1, 1) : random.nextDouble(0.2, 2)));
            }
        }
        int n = 5;
        float[] xs = new float[n * 6];
        for (int i = 0; i < xs.length; i++) {
            xs[i] = (float) random.nextGaussian();
        }
        long[] is = {3, 0, 19, 7, 3};
        Map<String, Tensor> feed = Map.of("x", Tensor.of(xs, n, 6), "ids", Tensor.ofLongs(is, n, 1));
        List<String> outputs = List.of(probabilities.name(), joined.name());
        InferenceModel model = new InferenceModel(main, scope, List.of("x", "ids"), outputs);
        ModelProto onnx = model.toOnnx();
        List<String> onnxOps = onnx.getGraph().getNodeList().stream().map(node -> node.getOpType()).distinct().toList();
        for (String op : List.of("MatMul", "Add", "Tanh", "BatchNormalization", "Gather", "Concat", "Reshape", "Erf",
                "Sigmoid", "Sum", "Transpose", "Unsqueeze", "Sub", "Mul", "Div", "Relu", "Softmax")) {
            assertTrue(onnxOps.contains(op), op + " missing from " + onnxOps);
        }
        assertFalse(onnxOps.contains("Dropout"), "an inference-time dropout is removed: " + onnxOps);
        Map<String, Tensor> expected = model.run(exe, feed);
        for (String out : outputs) {
            float[] got = runOnnx(onnx.toByteArray(), feed, out);
            float[] want = expected.get(out).toFloatArray();
            assertEquals(want.length, got.length, out);
            double diff = maxDifference(want, got);
            assertTrue(diff <= TOLERANCE, out + " differs by " + diff);
        }
        assertTrue(main.globalBlock().ops().stream().map(Op::type).toList().contains("dropout"));
    }

    @Test
    void anOpWithNoOnnxFormFailsNamingItAndWritesNothing() {
        Program test = mnist.test().copy();
        Layers nn = new Layers(test, new Program());
        Var accuracy = nn.accuracy(test.globalBlock().var(mnist.probabilities().name()), test.globalBlock().var("label"));
        Path file = work.resolve("refused").resolve("model.onnx");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> fleet.saveInferenceModel(file,
                test, List.of("image", "label"), List.of(accuracy.name()), mnist.scope(), Format.ONNX));
        assertTrue(e.getMessage().contains("op accuracy (output '" + accuracy.name() + "')"), e.getMessage());
        assertFalse(Files.exists(file.getParent()), "the refused export created " + file.getParent());

        Program training = mnist.test().copy();
        Var dropped = new Layers(training, new Program()).dropout(training.globalBlock().var(mnist.probabilities().name()),
                0.5f, false);
        e = assertThrows(IllegalArgumentException.class, () -> fleet.saveInferenceModel(file, training,
                List.of("image"), List.of(dropped.name()), mnist.scope(), Format.ONNX));
        assertTrue(e.getMessage().contains("op dropout (output '" + dropped.name() + "') is in training mode"),
                e.getMessage());
        assertFalse(Files.exists(file.getParent()));

        // batch_norm's outputs include the running statistics (parameters): the message names Y, the layer's result
        Program normalised = mnist.test().copy();
        Var y = new Layers(normalised, new Program()).batchNorm(normalised.globalBlock().var(mnist.probabilities().name()),
                false);
        e = assertThrows(IllegalArgumentException.class, () -> fleet.saveInferenceModel(file, normalised,
                List.of("image"), List.of(y.name()), mnist.scope(), Format.ONNX));
        assertTrue(e.getMessage().contains("op batch_norm (output '" + y.name() + "') is in training mode"),
                e.getMessage());
        assertFalse(Files.exists(file.getParent()));
    }

    /** The float output {@code output} of ONNX Runtime (one thread) running {@code model} on {@code feed}. */
    static float[] runOnnx(byte[] model, Map<String, Tensor> feed, String output) throws OrtException {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            options.setIntraOpNumThreads(1);
            try (OrtSession session = env.createSession(model, options)) {
                Map<String, OnnxTensor> inputs = new HashMap<>();
                try {
                    for (Map.Entry<String, Tensor> f : feed.entrySet()) {
                        Tensor t = f.getValue();
                        inputs.put(f.getKey(), t.dtype() == DType.I64
                                ? OnnxTensor.createTensor(env, LongBuffer.wrap(t.toLongArray()), t.shape())
                                : OnnxTensor.createTensor(env, FloatBuffer.wrap(t.toFloatArray()), t.shape()));
                    }
                    try (OrtSession.Result r = session.run(inputs)) {
                        OnnxTensor out = (OnnxTensor) r.get(output).orElseThrow();
                        FloatBuffer fb = out.getFloatBuffer();
                        float[] values = new float[fb.remaining()];
                        fb.get(values);
                        return values;
                    }
                } finally {
                    inputs.values().forEach(OnnxTensor::close);
                }
            }
        }
    }

    private static ByteString transposed(ByteString raw, int n) {
        ByteBuffer in = raw.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer out = ByteBuffer.allocate(raw.size()).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                out.putFloat((i * n + j) * 4, in.getFloat((j * n + i) * 4));
            }
        }
        return ByteString.copyFrom(out.array());
    }

    private static double maxDifference(float[] a, float[] b) {
        double max = 0;
        for (int i = 0; i < a.length; i++) {
            max = Math.max(max, Math.abs((double) a[i] - b[i]));
        }
        return max;
    }

    private static int argmax(float[] p, int row) {
        int best = 0;
        for (int c = 1; c < 10; c++) {
            if (p[row * 10 + c] > p[row * 10 + best]) {
                best = c;
            }
        }
        return best;
    }

    private static int differentPredictions(float[] a, float[] b) {
        int n = 0;
        for (int row = 0; row < a.length / 10; row++) {
            n += argmax(a, row) != argmax(b, row) ? 1 : 0;
        }
        return n;
    }

    private static int correct(float[] p, Tensor labels) {
        int n = 0;
        for (int row = 0; row < p.length / 10; row++) {
            n += argmax(p, row) == labels.getLong(row) ? 1 : 0;
        }
        return n;
    }
}
