package org.fleet4j.core.optim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.layers.Initializer;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every transformer recipe's optimizer does, against PyTorch (torch_adamw.py): AdamW with the biases and norm
 * weights excluded from decay by name, gradients clipped by their global norm, and a linear warm-up then cosine
 * learning rate, over ten steps on the same gradients; the parameters agree within float32 noise (PyTorch's own
 * float32 distance from float64), and the rate of every step matches PyTorch's SequentialLR(LinearLR,
 * CosineAnnealingLR).
 */
class TransformerRecipeTorchTest {
    private static final String PYTHON = "/usr/bin/python3";
    private static final int STEPS = 10;
    /** Through the last step of the schedule: after it Fleet4J stays at min_lr, PyTorch's cosine (periodic) rises. */
    private static final int LR_STEPS = 31;
    private static final int TOTAL = LR_STEPS - 1;
    private static final double LR = 0.05;
    private static final int WARMUP = 3;
    private static final double MIN_LR = 0.002;
    private static final double START_FACTOR = 0.1;
    private static final float WEIGHT_DECAY = 0.1f;
    private static final float CLIP = 1.0f;
    private static final Map<String, String> FLEET_NAME = Map.of("w", "fc_0.w_0", "b", "fc_0.b_0", "ln", "h.0.ln_1.w_0");
    private static final Map<String, long[]> SHAPE = Map.of("w", new long[]{4, 3}, "b", new long[]{3}, "ln",
            new long[]{3});

    @TempDir
    Path dir;

    @Test
    void adamWWithExclusionsClippingAndWarmupCosineMatchPyTorch() throws Exception {
        SplittableRandom r = new SplittableRandom(5);
        Map<String, Tensor> inputs = new LinkedHashMap<>();
        for (String n : List.of("w", "b", "ln")) {
            inputs.put(n, random(r, 1, SHAPE.get(n)));
            for (int s = 0; s < STEPS; s++) {
                // growing gradients: the first steps are within the clip norm, the later ones are clipped
                inputs.put("g." + n + "." + s, random(r, 0.1 + 0.15 * s, SHAPE.get(n)));
            }
        }
        inputs.put("config", Tensor.ofDoubles(new double[]{STEPS, LR, WARMUP, TOTAL, MIN_LR, START_FACTOR, WEIGHT_DECAY,
            0.9, 0.95, 1e-8, CLIP, LR_STEPS}, 12));
        SafeTensors.write(dir.resolve("inputs.safetensors"), inputs, Map.of());
        python();
        Map<String, Tensor> expected = SafeTensors.read(dir.resolve("expected.safetensors"));

        LrSchedule schedule = LrSchedule.warmupCosine(LR, WARMUP, TOTAL, MIN_LR, START_FACTOR * LR);
        Tensor rates = expected.get("lr");
        for (int s = 0; s < LR_STEPS; s++) {
            assertEquals(rates.getDouble(s), schedule.at(s), 1e-12 * LR, "learning rate at step " + s);
        }

        Map<String, Tensor> fleet = train(inputs, schedule, AdamW.notBiasOrNorm(), new ClipGradByGlobalNorm(CLIP));
        Map<String, Double> bounds = new LinkedHashMap<>();
        for (String n : List.of("w", "b", "ln")) {
            double fleetError = maxAbsDiff(fleet.get(n), expected.get(n + ".f64"));
            double torchError = maxAbsDiff(expected.get(n + ".f32"), expected.get(n + ".f64"));
            double bound = Math.max(8 * torchError, 4 * Math.ulp(1f));
            bounds.put(n, bound);
            System.out.printf("TransformerRecipeTorchTest: %s |fleet - torch64| %.3e, |torch32 - torch64| %.3e, bound"
                    + " %.3e%n", n, fleetError, torchError, bound);
            assertTrue(fleetError <= bound, n + " after " + STEPS + " steps is " + fleetError + " from PyTorch's"
                    + " float64 result, more than float32 noise (bound " + bound + ")");
        }
        // planted: the bias decayed too, and no clipping; each must be caught
        Map<String, Tensor> decayAll = train(inputs, schedule, name -> true, new ClipGradByGlobalNorm(CLIP));
        assertTrue(maxAbsDiff(decayAll.get("b"), expected.get("b.f64")) > 10 * bounds.get("b"), "decaying the bias");
        Map<String, Tensor> unclipped = train(inputs, schedule, AdamW.notBiasOrNorm(), null);
        assertTrue(maxAbsDiff(unclipped.get("w"), expected.get("w.f64")) > 10 * bounds.get("w"), "not clipping");
        assertFalse(AdamW.notBiasOrNorm().test("layer_norm_3.w_0") || AdamW.notBiasOrNorm().test("bn.bias"));
        assertTrue(AdamW.notBiasOrNorm().test("transformer.wte.w_0"));
    }

    /** The parameters (by short name) after STEPS steps of AdamW on the given gradients. */
    private static Map<String, Tensor> train(Map<String, Tensor> inputs, LrSchedule schedule, Predicate<String> decay,
                                             ClipGradByGlobalNorm clip) {
        Layers nn = new Layers(new Program(), new Program());
        List<ParamGrad> grads = new ArrayList<>();
        for (String n : List.of("w", "b", "ln")) {
            nn.createParameter(FLEET_NAME.get(n), DType.F32, SHAPE.get(n), Initializer.values(inputs.get(n)));
            nn.data("g_" + n, DType.F32, SHAPE.get(n));
            grads.add(new ParamGrad(FLEET_NAME.get(n), "g_" + n));
        }
        new AdamW(schedule, 0.9f, 0.95f, 1e-8f, WEIGHT_DECAY, decay).withGradClip(clip).applyGradients(nn.main(), grads);
        Scope scope = new Scope();
        try (Executor exe = new Executor()) {
            exe.run(nn.startup(), scope);
            for (int s = 0; s < STEPS; s++) {
                Map<String, Tensor> feed = new LinkedHashMap<>();
                for (String n : List.of("w", "b", "ln")) {
                    feed.put("g_" + n, inputs.get("g." + n + "." + s).copy());
                }
                exe.run(nn.main(), scope, feed, List.of());
            }
        }
        Map<String, Tensor> out = new LinkedHashMap<>();
        FLEET_NAME.forEach((n, name) -> out.put(n, scope.find(name)));
        return out;
    }

    private static Tensor random(SplittableRandom r, double scale, long[] shape) {
        Tensor t = Tensor.zeros(DType.F32, shape);
        for (long i = 0; i < t.numel(); i++) {
            t.setFloat(i, (float) (scale * (2 * r.nextDouble() - 1)));
        }
        return t;
    }

    private static double maxAbsDiff(Tensor a, Tensor b) {
        assertEquals(a.numel(), b.numel());
        double max = 0;
        for (long i = 0; i < a.numel(); i++) {
            max = Math.max(max, Math.abs(a.getDouble(i) - b.getDouble(i)));
        }
        return max;
    }

    private void python() throws Exception {
        Path script = Path.of(TransformerRecipeTorchTest.class.getResource("/interop/torch_adamw.py").toURI());
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
