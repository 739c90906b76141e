package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.fleet4j.core.tensor.BFloat16;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.core.amp.AmpConfig;
import org.fleet4j.core.amp.AmpDtype;
import org.fleet4j.core.amp.LossScaler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every GPU kernel against fleet-core's CPU kernel on the same inputs. Needs a GPU and NVRTC. */
class GpuKernelsTest {
    private static final float F32_TOLERANCE = 2e-5f;
    private static GpuDevice gpu;
    private static GpuKernels kernels;

    @TempDir
    static Path cacheDir;

    /** Per test, so that each one reports its own skip where there is no GPU; the device is opened once. */
    @BeforeEach
    void open() {
        GpuAssumptions.require(CudaLibrary.NVRTC);
        if (gpu == null) {
            gpu = GpuDevice.open(0, 0);
            kernels = new GpuKernels(gpu, new KernelCache(new NvrtcCompiler(), cacheDir));
        }
    }

    @AfterAll
    static void close() {
        if (kernels != null) {
            kernels.close();
        }
        if (gpu != null) {
            gpu.close();
        }
    }

    private static Tensor random(long seed, long... shape) {
        Random r = new Random(seed);
        Tensor t = Tensor.zeros(shape);
        for (long i = 0; i < t.numel(); i++) {
            t.setFloat(i, (float) r.nextGaussian() * 2);
        }
        return t;
    }

    private static GpuBuffer upload(Tensor t) {
        GpuBuffer b = gpu.allocate(t.byteSize());
        gpu.copyFromHost(t.segment(), b, 0);
        return b;
    }

    private static Tensor download(GpuBuffer b, DType dtype, long... shape) {
        Tensor t = Tensor.zeros(dtype, shape);
        gpu.copyToHost(b, 0, t.segment());
        return t;
    }

    private static void assertClose(Tensor expected, Tensor actual, float tolerance, String what) {
        assertEquals(expected.numel(), actual.numel(), what);
        for (long i = 0; i < expected.numel(); i++) {
            float e = expected.getFloat(i);
            float a = actual.getFloat(i);
            assertTrue(Math.abs(e - a) <= tolerance * Math.max(1, Math.abs(e)),
                    what + ": element " + i + " is " + a + " on the GPU, " + e + " on the CPU");
        }
    }

    @Test
    void activationsMatchTheCpu() {
        Tensor x = random(1, 37, 129);
        GpuBuffer in = upload(x);
        GpuBuffer out = gpu.allocate(x.byteSize());
        for (String op : List.of("relu", "sigmoid", "tanh", "gelu")) {
            kernels.launch(op + "_f32", LaunchShape.elements(x.numel(), gpu.properties().multiprocessors()), in, out, x.numel());
            Tensor cpu = CpuOp.run(op, Map.of("X", x), Map.of(), List.of("Out")).get("Out");
            assertClose(cpu, download(out, DType.F32, x.shape()), F32_TOLERANCE, op);
        }
    }

    @Test
    void elementwiseWithABiasRowMatchesTheCpu() {
        Tensor x = random(2, 64, 33);
        Tensor bias = random(3, 33);
        GpuBuffer out = gpu.allocate(x.byteSize());
        for (String op : List.of("elementwise_add", "elementwise_mul", "elementwise_sub")) {
            kernels.launch(op + "_f32", LaunchShape.elements(x.numel(), 1), upload(x), upload(bias), out, x.numel(), bias.numel());
            Tensor cpu = CpuOp.run(op, Map.of("X", x, "Y", bias), Map.of(), List.of("Out")).get("Out");
            assertClose(cpu, download(out, DType.F32, x.shape()), F32_TOLERANCE, op);
        }
    }

    @Test
    void softmaxWithCrossEntropyMatchesTheCpu() {
        long rows = 50;
        long classes = 1000;
        Tensor logits = random(4, rows, classes);
        long[] labelValues = new long[(int) rows];
        for (int r = 0; r < rows; r++) {
            labelValues[r] = (r * 37L) % classes;
        }
        Tensor labels = Tensor.ofLongs(labelValues, rows, 1);
        GpuBuffer softmax = gpu.allocate(logits.byteSize());
        GpuBuffer loss = gpu.allocate(rows * 4);
        kernels.launch("softmax_xent_f32", LaunchShape.rows(rows), upload(logits), upload(labels), softmax, loss, classes, -100L);
        Map<String, Tensor> cpu = CpuOp.run("softmax_with_cross_entropy", Map.of("Logits", logits, "Label", labels),
                Map.of(), List.of("Softmax", "Loss"));
        assertClose(cpu.get("Softmax"), download(softmax, DType.F32, rows, classes), 1e-5f, "softmax");
        assertClose(cpu.get("Loss"), download(loss, DType.F32, rows, 1), 1e-5f, "loss");
    }

    @Test
    void meanMatchesTheCpu() {
        Tensor x = random(5, 1000, 77);
        GpuBuffer out = gpu.allocate(4);
        gpu.zero(out);
        kernels.launch("sum_f32", LaunchShape.elements(x.numel(), gpu.properties().multiprocessors()), upload(x), out,
                x.numel(), 1f / x.numel());
        Tensor cpu = CpuOp.run("mean", Map.of("X", x), Map.of(), List.of("Out")).get("Out");
        assertClose(cpu, download(out, DType.F32, 1), 1e-4f, "mean");
    }

    @Test
    void sgdAndAdamMatchTheCpu() {
        Tensor p = random(6, 300, 7);
        Tensor g = random(7, 300, 7);
        Tensor lr = Tensor.of(new float[]{0.01f}, 1);
        GpuBuffer param = upload(p);
        kernels.launch("sgd_f32", LaunchShape.elements(p.numel(), 1), param, upload(g), upload(lr), 0f, p.numel());
        Tensor cpu = CpuOp.run("sgd", Map.of("Param", p, "Grad", g, "LearningRate", lr), Map.of(), List.of("ParamOut"))
                .get("ParamOut");
        assertClose(cpu, download(param, DType.F32, p.shape()), F32_TOLERANCE, "sgd");

        Tensor m1 = random(8, 300, 7);
        Tensor m2 = Tensor.zeros(300, 7);
        for (long i = 0; i < m2.numel(); i++) {
            m2.setFloat(i, Math.abs(m1.getFloat(i)));
        }
        Tensor b1p = Tensor.of(new float[]{0.9f * 0.9f}, 1);
        Tensor b2p = Tensor.of(new float[]{0.999f * 0.999f}, 1);
        GpuBuffer gp = upload(p);
        GpuBuffer gm1 = upload(m1);
        GpuBuffer gm2 = upload(m2);
        kernels.launch("adam_f32", LaunchShape.elements(p.numel(), 1), gp, upload(g), gm1, gm2, upload(lr), upload(b1p),
                upload(b2p), 0.9f, 0.999f, 1e-8f, 0f, p.numel());
        Map<String, Tensor> adam = CpuOp.run("adam", Map.of("Param", p, "Grad", g, "LearningRate", lr, "Moment1", m1,
                "Moment2", m2, "Beta1Pow", b1p, "Beta2Pow", b2p), Map.of(),
                List.of("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut"));
        assertClose(adam.get("ParamOut"), download(gp, DType.F32, p.shape()), F32_TOLERANCE, "adam param");
        assertClose(adam.get("Moment1Out"), download(gm1, DType.F32, p.shape()), F32_TOLERANCE, "adam moment1");
        assertClose(adam.get("Moment2Out"), download(gm2, DType.F32, p.shape()), F32_TOLERANCE, "adam moment2");
    }

    @Test
    void embeddingMatchesTheCpu() {
        Tensor table = random(9, 50, 16);
        Tensor ids = Tensor.ofLongs(new long[]{3, 0, 49, 3, 17}, 5, 1);
        GpuBuffer out = gpu.allocate(5 * 16 * 4);
        kernels.launch("lookup_table_f32", LaunchShape.elements(80, 1), upload(table), upload(ids), out, 5L, 16L, 50L, -1L);
        Tensor cpu = CpuOp.run("lookup_table", Map.of("W", table, "Ids", ids), Map.of(), List.of("Out")).get("Out");
        assertClose(cpu, download(out, DType.F32, 5, 16), 0f, "lookup_table");
    }

    @Test
    void activationGradientsMatchTheCpu() {
        Tensor x = random(12, 41, 65);
        Tensor g = random(13, 41, 65);
        GpuBuffer gx = gpu.allocate(x.byteSize());
        GpuBuffer out = gpu.allocate(x.byteSize());
        for (String op : List.of("relu", "sigmoid", "tanh", "gelu")) {
            Tensor y = CpuOp.run(op, Map.of("X", x), Map.of(), List.of("Out")).get("Out");
            gpu.copyFromHost(y.segment(), out, 0);
            kernels.launch(op + "_grad_f32", LaunchShape.elements(x.numel(), 1), upload(x), out, upload(g), gx, x.numel());
            Tensor cpu = CpuOp.run(op + "_grad", Map.of("X", x, "Out", y, "Out@GRAD", g), Map.of(), List.of("X@GRAD"))
                    .get("X@GRAD");
            assertClose(cpu, download(gx, DType.F32, x.shape()), F32_TOLERANCE, op + "_grad");
        }
    }

    @Test
    void softmaxWithCrossEntropyGradientMatchesTheCpu() {
        long rows = 20;
        long classes = 300;
        Tensor logits = random(14, rows, classes);
        long[] labelValues = new long[(int) rows];
        for (int r = 0; r < rows; r++) {
            labelValues[r] = r == 3 ? -100 : (r * 7L) % classes; // row 3 is ignored
        }
        Tensor labels = Tensor.ofLongs(labelValues, rows, 1);
        Tensor dloss = random(15, rows, 1);
        Map<String, Tensor> forward = CpuOp.run("softmax_with_cross_entropy", Map.of("Logits", logits, "Label", labels),
                Map.of(), List.of("Softmax", "Loss"));
        GpuBuffer dlogits = gpu.allocate(logits.byteSize());
        kernels.launch("softmax_xent_grad_f32", LaunchShape.elements(logits.numel(), 1), upload(forward.get("Softmax")),
                upload(labels), upload(dloss), dlogits, rows, classes, -100L);
        Tensor cpu = CpuOp.run("softmax_with_cross_entropy_grad", Map.of("Logits", logits, "Label", labels,
                "Softmax", forward.get("Softmax"), "Loss", forward.get("Loss"), "Loss@GRAD", dloss), Map.of(),
                List.of("Logits@GRAD")).get("Logits@GRAD");
        assertClose(cpu, download(dlogits, DType.F32, rows, classes), 1e-5f, "softmax_with_cross_entropy_grad");
    }

    @Test
    void momentumMatchesTheCpu() {
        Tensor p = random(16, 99, 5);
        Tensor g = random(17, 99, 5);
        Tensor v = random(18, 99, 5);
        Tensor lr = Tensor.of(new float[]{0.05f}, 1);
        for (boolean nesterov : new boolean[]{false, true}) {
            GpuBuffer gp = upload(p);
            GpuBuffer gv = upload(v);
            kernels.launch("momentum_f32", LaunchShape.elements(p.numel(), 1), gp, upload(g), gv, upload(lr), 0.9f,
                    nesterov ? 1 : 0, p.numel());
            Map<String, Tensor> cpu = CpuOp.run("momentum", Map.of("Param", p, "Grad", g, "Velocity", v, "LearningRate", lr),
                    Map.of("mu", 0.9f, "use_nesterov", nesterov), List.of("ParamOut", "VelocityOut"));
            assertClose(cpu.get("ParamOut"), download(gp, DType.F32, p.shape()), F32_TOLERANCE, "momentum param, nesterov=" + nesterov);
            assertClose(cpu.get("VelocityOut"), download(gv, DType.F32, p.shape()), F32_TOLERANCE, "momentum velocity");
        }
    }

    @Test
    void batchNormAndItsGradientMatchTheCpu() {
        long n = 8;
        long c = 6;
        long hw = 25;
        Tensor x = random(19, n, c, 5, 5);
        Tensor scale = random(20, c);
        Tensor bias = random(21, c);
        Tensor mean = random(22, c);
        Tensor variance = Tensor.zeros(c);
        for (long i = 0; i < c; i++) {
            variance.setFloat(i, 1 + i);
        }
        for (boolean isTest : new boolean[]{false, true}) {
            GpuBuffer runningMean = upload(mean);
            GpuBuffer runningVar = upload(variance);
            GpuBuffer y = gpu.allocate(x.byteSize());
            GpuBuffer savedMean = gpu.allocate(c * 4);
            GpuBuffer savedInvStd = gpu.allocate(c * 4);
            kernels.launch("batch_norm_f32", LaunchShape.rows(c), upload(x), upload(scale), upload(bias), runningMean,
                    runningVar, y, savedMean, savedInvStd, n, c, hw, 0.9f, 1e-5f, isTest ? 1 : 0);
            Map<String, Tensor> cpu = CpuOp.run("batch_norm", Map.of("X", x, "Scale", scale, "Bias", bias, "Mean", mean,
                    "Variance", variance), Map.of("is_test", isTest),
                    List.of("Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance"));
            String mode = isTest ? " (test mode)" : " (training)";
            assertClose(cpu.get("Y"), download(y, DType.F32, x.shape()), 1e-5f, "batch_norm Y" + mode);
            assertClose(cpu.get("MeanOut"), download(runningMean, DType.F32, c), 1e-5f, "running mean" + mode);
            assertClose(cpu.get("VarianceOut"), download(runningVar, DType.F32, c), 1e-5f, "running variance" + mode);
            assertClose(cpu.get("SavedVariance"), download(savedInvStd, DType.F32, c), 1e-5f, "inverse std" + mode);

            Tensor dy = random(23, n, c, 5, 5);
            GpuBuffer dx = gpu.allocate(x.byteSize());
            GpuBuffer dscale = gpu.allocate(c * 4);
            GpuBuffer dbias = gpu.allocate(c * 4);
            kernels.launch("batch_norm_grad_f32", LaunchShape.rows(c), upload(x), upload(scale), savedMean, savedInvStd,
                    upload(dy), dx, dscale, dbias, n, c, hw, isTest ? 1 : 0);
            Map<String, Tensor> grads = CpuOp.run("batch_norm_grad", Map.of("X", x, "Scale", scale, "Bias", bias,
                    "Mean", mean, "Variance", variance, "SavedMean", cpu.get("SavedMean"),
                    "SavedVariance", cpu.get("SavedVariance"), "Y", cpu.get("Y"), "Y@GRAD", dy), Map.of("is_test", isTest),
                    List.of("X@GRAD", "Scale@GRAD", "Bias@GRAD"));
            assertClose(grads.get("X@GRAD"), download(dx, DType.F32, x.shape()), 1e-4f, "batch_norm dX" + mode);
            assertClose(grads.get("Scale@GRAD"), download(dscale, DType.F32, c), 1e-4f, "batch_norm dScale" + mode);
            assertClose(grads.get("Bias@GRAD"), download(dbias, DType.F32, c), 1e-4f, "batch_norm dBias" + mode);
        }
    }

    @Test
    void ampCastsAndUnscaleMatchTheCpu() {
        Tensor x = random(10, 4097);
        x.setFloat(5, Float.NaN);
        GpuBuffer bf16 = gpu.allocate(x.numel() * 2);
        kernels.launch("cast_f32_to_bf16", LaunchShape.elements(x.numel(), 1), upload(x), bf16, x.numel());
        Tensor words = download(bf16, DType.BF16, x.numel());
        for (long i = 0; i < x.numel(); i++) {
            assertEquals(BFloat16.fromFloat(x.getFloat(i)), words.segment().getAtIndex(ValueLayout.JAVA_SHORT, i), "bf16 of element " + i);
        }
        Tensor grads = random(11, 1000);
        LossScaler scaler = new LossScaler(new AmpConfig(AmpDtype.FP16, 1024, 10, 2, 2, 0.5, true, Set.of(), Set.of()));
        GpuBuffer g = upload(grads);
        GpuBuffer found = gpu.allocate(8);
        gpu.zero(found);
        kernels.launch("check_finite_and_unscale_f32", LaunchShape.elements(1000, 1), g, g,
                upload(Tensor.of(new float[]{1024f}, 1)), found, 1000L);
        Tensor expected = grads.copy();
        assertEquals(false, scaler.unscale(List.of(expected)));
        assertClose(expected, download(g, DType.F32, 1000), 0f, "unscale");
        assertEquals(0, download(found, DType.I64, 1).getLong(0));
    }
}
