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
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * A PyTorch CNN's state_dict (Conv2d with bias, BatchNorm2d, a grouped Conv2d, GroupNorm, Linear) loaded by name into
 * the same Fleet4J layers gives PyTorch's logits within float32 noise, with batch norm in eval mode (running
 * statistics) and in train mode (the batch's statistics over N, H and W).
 */
class TorchConvInteropTest {
    private static final String PYTHON = "/usr/bin/python3";
    private static final List<String> MODULES = List.of("conv1", "bn1", "conv2", "gn", "fc");
    private static final double NOISE_FACTOR = 8;

    @TempDir
    Path dir;

    /** torch_conv_model.py's Model, layer for layer; its logits are the last op's output. */
    private static Layers model(boolean isTest) {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 1, 12, 12);
        Var h = nn.conv2d(x, 4, 3, 1, 1, null);
        h = nn.pool2d(nn.relu(nn.batchNorm(h, isTest)), 2, "max", 2, 0);
        h = nn.conv2d(h, 6, 3, 2, 0, 1, 2, null, true);
        h = nn.groupNorm(h, 3, 1e-5f, "relu", null, org.fleet4j.core.layers.ParamAttr.DEFAULT,
                org.fleet4j.core.layers.ParamAttr.DEFAULT);
        nn.fc(nn.pool2d(h, 1, "avg", 1, 0), 5, null);
        return nn;
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void pytorchWeightsGiveThePyTorchLogits(boolean isTest) throws Exception {
        python();
        Layers nn = model(isTest);
        Scope scope = new Scope();
        Tensor x = SafeTensors.read(dir.resolve("inputs.safetensors")).get("x");
        Map<String, Tensor> expected = SafeTensors.read(dir.resolve("expected.safetensors"));
        String mode = isTest ? "eval" : "train";
        Tensor logits;
        try (Executor exe = new Executor()) {
            exe.run(nn.startup(), scope);
            LoadReport r = TorchStateDict.of(nn.main(), MODULES).load(dir.resolve("torch.safetensors"), scope,
                    ParameterLoadOptions.STRICT);
            assertEquals(ModelState.names(nn.main()), r.loaded());
            String out = nn.main().globalBlock().ops().getLast().out("Out");
            logits = exe.run(nn.main(), scope, Map.of("x", x), List.of(out)).get(out);
        }
        Tensor t64 = expected.get(mode + "64");
        double fleetError = maxAbsDiff(logits, t64);
        double torchError = maxAbsDiff(expected.get(mode + "32"), t64);
        double bound = Math.max(NOISE_FACTOR * torchError, 4 * Math.ulp((float) maxAbs(t64)));
        System.out.printf("TorchConvInteropTest %s: max |fleet - torch float64| %.3e, max |torch float32 - float64| "
                + "%.3e, bound %.3e%n", mode, fleetError, torchError, bound);
        assertTrue(fleetError <= bound, mode + ": Fleet4J's logits are " + fleetError + " from PyTorch's float64 ones, "
                + "PyTorch's float32 ones " + torchError + ": more than float32 noise (bound " + bound + ")");
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

    private void python() throws IOException, InterruptedException, URISyntaxException {
        Path script = Path.of(TorchConvInteropTest.class.getResource("/interop/torch_conv_model.py").toURI());
        Process p = new ProcessBuilder(PYTHON, script.toString(), dir.toString()).redirectErrorStream(true).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(PYTHON + " " + script + " did not finish in 120 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (out.contains("No module named 'torch'")) {
            fail("PyTorch is not installed for " + PYTHON + "; run scripts/install-deps.sh (it installs python3-torch)");
        }
        assertEquals(0, p.exitValue(), PYTHON + " " + script + " failed:\n" + out);
    }
}
