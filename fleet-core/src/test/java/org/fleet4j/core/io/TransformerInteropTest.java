package org.fleet4j.core.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A nanoGPT-style transformer block's state_dict (torch_transformer.py: nanoGPT's module names, its causal-mask buffer
 * included) loads by name into {@code Layers.transformerBlock(x, ..., "transformer.h.0")} and gives PyTorch's output
 * within float32 noise (PyTorch's own float32 distance from float64), while PyTorch's outputs with a planted mistake in
 * attention (the causal mask off by one diagonal, the values' heads transposed wrongly) are far outside it.
 */
class TransformerInteropTest {
    private static final String PYTHON = "/usr/bin/python3";
    private static final double NOISE_FACTOR = 8;

    @TempDir
    Path dir;

    @Test
    void aNanoGptBlockLoadsByNameAndGivesPyTorchsOutput() throws Exception {
        python();
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 8, 32);
        Var y = nn.transformerBlock(x, 4, true, null, 0f, true, "transformer.h.0");
        Map<String, Tensor> expected = SafeTensors.read(dir.resolve("expected.safetensors"));
        Tensor out;
        try (Executor exe = new Executor()) {
            Scope scope = new Scope();
            exe.run(nn.startup(), scope);
            // non-strict for nanoGPT's attn.bias, its causal mask and not a weight: Fleet4J's attention makes its own
            LoadReport report = TorchStateDict.byLayerNames(nn.main()).load(dir.resolve("torch.safetensors"), scope,
                    ParameterLoadOptions.STRICT.nonStrict());
            assertEquals(ModelState.names(nn.main()), report.loaded(), "every weight of the block is loaded");
            assertEquals(12, report.loaded().size());
            assertEquals(List.of("transformer.h.0.attn.bias"), report.unexpected());
            assertEquals(List.of(), report.missing());
            out = exe.run(nn.main(), scope, Map.of("x", SafeTensors.read(dir.resolve("inputs.safetensors")).get("x")),
                    List.of(y.name())).get(y.name());
        }
        Tensor out64 = expected.get("out64");
        assertArrayEquals(out64.shape(), out.shape());
        double fleet = maxAbsDiff(out, out64);
        double torch = maxAbsDiff(expected.get("out32"), out64);
        double bound = Math.max(NOISE_FACTOR * torch, 4 * Math.ulp((float) maxAbs(out64)));
        System.out.printf("TransformerInteropTest: |fleet - torch64| %.3e, |torch32 - torch64| %.3e, bound %.3e%n",
                fleet, torch, bound);
        assertTrue(fleet <= bound, "the block's output is " + fleet + " from PyTorch's float64 output, more than float32"
                + " noise (bound " + bound + ", PyTorch float32 " + torch + ")");
        for (String planted : List.of("mask_off_by_one64", "wrong_transpose64")) {
            double d = maxAbsDiff(out, expected.get(planted));
            System.out.printf("TransformerInteropTest: planted %s: |fleet - torch64| %.3e%n", planted, d);
            assertTrue(d > 100 * bound, "PyTorch's output with " + planted + " is only " + d + " from Fleet4J's: the"
                    + " comparison would not catch that mistake");
        }
    }

    private static double maxAbsDiff(Tensor a, Tensor b) {
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

    private void python() throws Exception {
        Path script = Path.of(TransformerInteropTest.class.getResource("/interop/torch_transformer.py").toURI());
        Process p = new ProcessBuilder(PYTHON, script.toString(), dir.toString()).redirectErrorStream(true).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(PYTHON + " " + script + " did not finish in 120 s");
        }
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (log.contains("No module named 'torch'")) {
            fail("PyTorch is not installed for " + PYTHON + "; run scripts/install-deps.sh (it installs python3-torch)");
        }
        assertEquals(0, p.exitValue(), PYTHON + " " + script + " failed:\n" + log);
    }
}
