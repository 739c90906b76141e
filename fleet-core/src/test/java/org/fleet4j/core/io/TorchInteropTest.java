package org.fleet4j.core.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Weights from PyTorch to Fleet4J and back, checked against a real PyTorch run (Debian's python3-torch, which
 * scripts/install-deps.sh installs): the same model gives the same logits within float32 rounding noise, measured as
 * the distance of PyTorch's own float32 logits from its float64 ones.
 */
class TorchInteropTest {
    private static final String PYTHON = "/usr/bin/python3";
    /** The PyTorch module of each layer, in the order the program below builds them. */
    private static final List<String> MODULES = List.of("emb", "fc1", "bn", "fc2");
    /** Fleet4J may be this many times PyTorch's own float32 error from float64 (another summation order). */
    private static final double NOISE_FACTOR = 8;

    @TempDir
    Path dir;

    /** ids [N, 1] and x [N, 8] -> logits [N, 4] (the last op's output), the layers of torch_model.py's Model in its order. */
    private static Layers model() {
        Layers nn = new Layers(new Program(), new Program());
        Var ids = nn.data("ids", DType.I64, -1, 1);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var h = nn.fc(nn.concat(List.of(nn.embedding(ids, 10, 4, false), x), 1), 16, "relu");
        nn.fc(nn.batchNorm(h, true, 0.9f, 1e-5f), 4, null);
        return nn;
    }

    @Test
    void pytorchWeightsGiveFleetThePyTorchLogits() throws Exception {
        python("export");
        Layers nn = model();
        Scope scope = new Scope();
        Map<String, Tensor> inputs = SafeTensors.read(dir.resolve("inputs.safetensors"));
        Map<String, Tensor> expected = SafeTensors.read(dir.resolve("expected.safetensors"));
        Tensor logits;
        try (Executor exe = new Executor()) {
            exe.run(nn.startup(), scope);
            LoadReport r = TorchStateDict.of(nn.main(), MODULES).load(dir.resolve("torch.safetensors"), scope,
                    ParameterLoadOptions.STRICT);
            assertEquals(ModelState.names(nn.main()), r.loaded());
            logits = run(exe, nn, scope, inputs);
        }
        double fleetError = maxAbsDiff(logits, expected.get("logits64"));
        double torchError = maxAbsDiff(expected.get("logits32"), expected.get("logits64"));
        assertWithinNoise(fleetError, torchError, maxAbs(expected.get("logits64")));
    }

    @Test
    void fleetWeightsGivePyTorchTheFleetLogits() throws Exception {
        python("export");
        Layers nn = model();
        Scope scope = new Scope();
        Map<String, Tensor> inputs = SafeTensors.read(dir.resolve("inputs.safetensors"));
        try (Executor exe = new Executor()) {
            exe.run(nn.startup(), scope);
            // running statistics and scale other than their initial 0, 1 and 1, so a swap or a missed one shows
            List<String> bn = List.of("batch_norm_0.w_0", "batch_norm_0.b_0", "batch_norm_0.w_1", "batch_norm_0.w_2");
            for (int k = 0; k < bn.size(); k++) {
                Tensor t = scope.find(bn.get(k));
                for (int i = 0; i < t.numel(); i++) {
                    t.setFloat(i, 0.5f + 0.05f * i + 0.7f * k);
                }
            }
            TorchStateDict.of(nn.main(), MODULES).save(dir.resolve("fleet.safetensors"), scope);
            SafeTensors.write(dir.resolve("fleet_logits.safetensors"), Map.of("logits", run(exe, nn, scope, inputs)), Map.of());
        }
        Matcher m = Pattern.compile("fleet_vs_float64 (\\S+) torch_float32_vs_float64 (\\S+) max_abs_logit (\\S+)")
                .matcher(python("check"));
        assertTrue(m.find(), "torch_model.py check printed no measurement");
        assertWithinNoise(Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)), Double.parseDouble(m.group(3)));
    }

    private static Tensor run(Executor exe, Layers nn, Scope scope, Map<String, Tensor> inputs) {
        Tensor ids = inputs.get("ids");
        Map<String, Tensor> feed = Map.of("ids", ids.reshape(ids.dim(0), 1), "x", inputs.get("x"));
        String out = nn.main().globalBlock().ops().getLast().out("Out");
        return exe.run(nn.main(), scope, feed, List.of(out)).get(out);
    }

    /** Fleet4J's error against float64 is float32 noise: a few times PyTorch's own, or a few ulps of the largest logit. */
    private static void assertWithinNoise(double fleetError, double torchError, double scale) {
        double bound = Math.max(NOISE_FACTOR * torchError, 4 * Math.ulp((float) scale));
        System.out.printf("TorchInteropTest: max |fleet - torch float64| %.3e, max |torch float32 - float64| %.3e, bound %.3e%n",
                fleetError, torchError, bound);
        assertTrue(fleetError <= bound, "Fleet4J's logits are " + fleetError + " from PyTorch's float64 ones, PyTorch's"
                + " float32 ones " + torchError + ": more than float32 noise (bound " + bound + ")");
    }

    private static double maxAbsDiff(Tensor a, Tensor b) {
        assertEquals(List.of(a.shape()[0], a.shape()[1]), List.of(b.shape()[0], b.shape()[1]));
        double max = 0;
        for (long i = 0; i < a.numel(); i++) {
            max = Math.max(max, Math.abs(a.getDouble(i) - b.getDouble(i)));
        }
        return max;
    }

    private static double maxAbs(Tensor a) {
        double max = 0;
        for (long i = 0; i < a.numel(); i++) {
            max = Math.max(max, Math.abs(a.getDouble(i)));
        }
        return max;
    }

    /** Runs torch_model.py {@code mode} on the test's folder; returns what it printed, failing with it if it failed. */
    private String python(String mode) throws IOException, InterruptedException, URISyntaxException {
        Path script = Path.of(TorchInteropTest.class.getResource("/interop/torch_model.py").toURI());
        Process p = new ProcessBuilder(PYTHON, script.toString(), mode, dir.toString()).redirectErrorStream(true).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(PYTHON + " " + script + " " + mode + " did not finish in 120 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (out.contains("No module named 'torch'")) {
            fail("PyTorch is not installed for " + PYTHON + "; run scripts/install-deps.sh (it installs python3-torch)");
        }
        assertEquals(0, p.exitValue(), PYTHON + " " + script + " " + mode + " failed:\n" + out);
        return out;
    }
}
