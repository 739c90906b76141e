package org.fleet4j.core.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.device.CpuProgramRunner;
import org.fleet4j.core.device.Device;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ParametersTest {
    private static final long[] W = {2, 3};
    private static final long[] B = {3};
    private static final float[] W_VALUES = {1, 2, 3, 4, 5, 6};
    private static final float[] B_VALUES = {0.5f, -0.5f, 0.25f};

    @TempDir
    Path dir;
    private Program main;
    private final Scope scope = new Scope();

    /** fc 2 -> 3 trained by SGD, so the program also holds optimizer state that a weights file does not. */
    @BeforeEach
    void buildAndInitialise() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 2);
        new SGD(0.1f).minimize(nn.mean(nn.fc(x, 3, null)));
        main = nn.main();
        try (Executor exe = new Executor()) {
            exe.run(nn.startup(), scope);
        }
    }

    private float[] w() {
        return scope.find("fc_0.w_0").toFloatArray();
    }

    @Test
    void aWeightsOnlyFileLoadsStrictlyWithoutTheOptimizerState() throws IOException {
        Path f = new RawSafeTensors().f32("fc_0.w_0", W, W_VALUES).f32("fc_0.b_0", B, B_VALUES).write(dir.resolve("w.safetensors"));
        LoadReport r = Parameters.load(f, main, scope, ParameterLoadOptions.STRICT);
        assertEquals(List.of("fc_0.w_0", "fc_0.b_0"), r.loaded());
        assertArrayEquals(W_VALUES, w());
        assertArrayEquals(B_VALUES, scope.find("fc_0.b_0").toFloatArray());
    }

    @Test
    void strictLoadingListsMissingAndUnexpectedNamesAndLoadsNothing() throws IOException {
        float[] before = w();
        Path f = new RawSafeTensors().f32("fc_0.w_0", W, W_VALUES).f32("extra", B, B_VALUES).write(dir.resolve("w.safetensors"));
        CheckpointException e = assertThrows(CheckpointException.class,
                () -> Parameters.load(f, main, scope, ParameterLoadOptions.STRICT));
        assertEquals("checkpoint " + f + ": 2 problems:\n  the file lacks the model's fc_0.b_0\n  the file holds tensors"
                + " the model does not have: extra (map their names, or load non-strict to skip them); nothing was loaded",
                e.getMessage());
        assertArrayEquals(before, w());
    }

    @Test
    void aWrongShapeFailsNamingItAndLoadsNothing() throws IOException {
        float[] before = w();
        Path f = new RawSafeTensors().f32("fc_0.w_0", new long[]{3, 2}, W_VALUES).f32("fc_0.b_0", B, B_VALUES)
                .write(dir.resolve("w.safetensors"));
        CheckpointException e = assertThrows(CheckpointException.class,
                () -> Parameters.load(f, main, scope, ParameterLoadOptions.STRICT.nonStrict()));
        assertEquals("checkpoint " + f + ": fc_0.w_0 has shape [3, 2], the model expects [2, 3]; nothing was loaded", e.getMessage());
        assertArrayEquals(before, w());
    }

    @Test
    void nonStrictLoadingReportsWhatItSkipped() throws IOException {
        float[] bias = scope.find("fc_0.b_0").toFloatArray();
        Path f = new RawSafeTensors().f32("fc_0.w_0", W, W_VALUES).f32("extra", B, B_VALUES).write(dir.resolve("w.safetensors"));
        LoadReport r = Parameters.load(f, main, scope, ParameterLoadOptions.STRICT.nonStrict());
        assertEquals(new LoadReport(List.of("fc_0.w_0"), List.of("fc_0.b_0"), List.of("extra")), r);
        assertArrayEquals(W_VALUES, w());
        assertArrayEquals(bias, scope.find("fc_0.b_0").toFloatArray());
    }

    @Test
    void halfDoubleAndBfloatValuesConvertToTheParameterDtype() throws IOException {
        float[] halves = {1, -2, 0.5f, 65504, 1e-3f, 3.140625f};
        Path f = new RawSafeTensors().f16("fc_0.w_0", W, halves).f64("fc_0.b_0", B, 0.1, 0.2, 0.3).write(dir.resolve("w.safetensors"));
        Parameters.load(f, main, scope, ParameterLoadOptions.STRICT);
        float[] expected = new float[6];
        for (int i = 0; i < 6; i++) {
            expected[i] = Float.float16ToFloat(Float.floatToFloat16(halves[i]));
        }
        assertArrayEquals(expected, w());
        assertArrayEquals(new float[]{0.1f, 0.2f, 0.3f}, scope.find("fc_0.b_0").toFloatArray());

        Path bf = dir.resolve("bf16.safetensors");
        SafeTensors.write(bf, Map.of("fc_0.w_0", Tensor.of(W_VALUES, W).to(DType.BF16), "fc_0.b_0", Tensor.of(B_VALUES, B)), Map.of());
        Parameters.load(bf, main, scope, ParameterLoadOptions.STRICT);
        assertArrayEquals(W_VALUES, w());
    }

    @Test
    void integerValuesAreNotTakenForFloatingWeights() throws IOException {
        Path f = dir.resolve("ints.safetensors");
        SafeTensors.write(f, Map.of("fc_0.w_0", Tensor.ofInts(new int[6], W), "fc_0.b_0", Tensor.of(B_VALUES, B)), Map.of());
        CheckpointException e = assertThrows(CheckpointException.class,
                () -> Parameters.load(f, main, scope, ParameterLoadOptions.STRICT));
        assertTrue(e.getMessage().contains("fc_0.w_0 is int32, the model's fc_0.w_0 is float32; only floating to floating"
                + " or integer to integer converts"), e.getMessage());
    }

    @Test
    void aNameMapRenamesTheFileTensors() throws IOException {
        Path f = new RawSafeTensors().f32("0.weight", W, W_VALUES).f32("0.bias", B, B_VALUES).write(dir.resolve("w.safetensors"));
        Path map = Files.writeString(dir.resolve("names.txt"), "# theirs = ours\n0.weight = fc_0.w_0\n\n0.bias=fc_0.b_0\n");
        Parameters.load(f, main, scope, ParameterLoadOptions.STRICT.withNameMap(map));
        assertArrayEquals(W_VALUES, w());

        LoadReport r = Parameters.load(f, main, scope, ParameterLoadOptions.STRICT.nonStrict()
                .withNameMap(n -> n.equals("0.weight") ? "fc_0.w_0" : null));
        assertEquals(List.of("0.bias"), r.unexpected());
    }

    @Test
    void aBadNameMapLineNamesTheFileAndLine() throws IOException {
        Path map = Files.writeString(dir.resolve("names.txt"), "0.weight=fc_0.w_0\n0.bias fc_0.b_0\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ParameterLoadOptions.STRICT.withNameMap(map));
        assertEquals("name map " + map + " line 2 '0.bias fc_0.b_0': expected one theirs=ours pair", e.getMessage());
    }

    @Test
    void theFileIsReadBeforeAndTheRunnerRereadsAfter() throws IOException {
        Path f = new RawSafeTensors().f32("fc_0.w_0", W, W_VALUES).f32("fc_0.b_0", B, B_VALUES).write(dir.resolve("w.safetensors"));
        List<String> calls = new ArrayList<>();
        try (Executor exe = new Executor(); ProgramRunner runner = new RecordingRunner(new CpuProgramRunner(exe), calls, scope)) {
            Parameters.load(f, main, scope, runner, ParameterLoadOptions.STRICT);
        }
        assertEquals(List.of("syncToScope w=initial", "scopeChanged w=loaded"), calls);
    }

    /** A runner that notes each sync and reread with the first weight the scope holds at that moment. */
    private record RecordingRunner(ProgramRunner inner, List<String> calls, Scope scope) implements ProgramRunner {
        public Device device() {
            return inner.device();
        }

        public Map<String, Tensor> run(Program program, Scope s, Map<String, Tensor> feed, List<String> fetch) {
            return inner.run(program, s, feed, fetch);
        }

        public void syncToScope(Scope s) {
            calls.add("syncToScope w=" + state(s));
            inner.syncToScope(s);
        }

        public void scopeChanged() {
            calls.add("scopeChanged w=" + state(scope));
            inner.scopeChanged();
        }

        public void close() {
            inner.close();
        }

        private static String state(Scope s) {
            return java.util.Arrays.equals(s.find("fc_0.w_0").toFloatArray(), W_VALUES) ? "loaded" : "initial";
        }
    }
}
