package org.fleet4j.core.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.core.autodiff.GradientChecker;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.tensor.Tensor;

/**
 * An op's forward outputs and input gradients against PyTorch's on the same inputs (Debian's python3-torch, which
 * scripts/install-deps.sh installs), with float64 as the yardstick: each case is run by Fleet4J in float32 (through
 * {@link GradientChecker#analytic()}: the op, L = sum(w * out) and backward) and by PyTorch in float32 and float64
 * (op_reference.py, one Python process for all cases of a check). A tensor passes when Fleet4J's distance from
 * PyTorch's float64 result is within {@link #NOISE_FACTOR} times PyTorch's own float32 distance from it (float32
 * noise, measured on the same inputs), or within {@link #ULPS} ulps of the tensor's largest magnitude.
 * <pre>
 * TorchOpCheck.cases()
 *     .add("conv_stride2", GradientChecker.forOp("conv2d").input("Input", x).input("Filter", w).attr("strides", ...),
 *          "F.conv2d(Input, Filter, stride=2)")
 *     .check(tempDir);
 * </pre>
 */
public final class TorchOpCheck {
    private static final String PYTHON = "/usr/bin/python3";
    /** Fleet4J may be this many times PyTorch's own float32 error from float64 (another summation order). */
    public static final double NOISE_FACTOR = 8;
    /** ... or this many ulps of the largest float64 magnitude, for tensors PyTorch's float32 computes exactly. */
    public static final double ULPS = 4;

    private record Case(String name, GradientChecker op, String code) {
    }

    /** How far one tensor of one case came from PyTorch's float64 result, next to PyTorch's own float32. */
    public record Measurement(String caseName, String tensor, double fleetError, double torchError, double bound) {
        public boolean passed() {
            return fleetError <= bound;
        }

        @Override
        public String toString() {
            return String.format("%s %s: |fleet - torch64| %.3e, |torch32 - torch64| %.3e, bound %.3e%s", caseName,
                    tensor, fleetError, torchError, bound, passed() ? "" : "  FAILED");
        }
    }

    private final List<Case> cases = new ArrayList<>();

    private TorchOpCheck() {
    }

    public static TorchOpCheck cases() {
        return new TorchOpCheck();
    }

    /**
     * A case: the op with its inputs and attributes (and {@link GradientChecker#lossFrom} for the outputs compared, by
     * default the first), and the PyTorch code computing those outputs from the input slots (see op_reference.py).
     */
    public TorchOpCheck add(String name, GradientChecker op, String torchCode) {
        if (!name.matches("[A-Za-z0-9_]+")) {
            throw new IllegalArgumentException("case name '" + name + "': letters, digits and _ only");
        }
        cases.add(new Case(name, op, torchCode));
        return this;
    }

    /** Runs every case in Fleet4J and in PyTorch, asserts each tensor within noise, and returns the measurements. */
    public List<Measurement> check(Path dir) {
        List<Measurement> all = measure(dir);
        List<Measurement> failed = all.stream().filter(m -> !m.passed()).toList();
        all.forEach(m -> System.out.println("TorchOpCheck: " + m));
        assertTrue(failed.isEmpty(), "outside float32 noise of PyTorch's float64 result:\n"
                + String.join("\n", failed.stream().map(Measurement::toString).toList()));
        return all;
    }

    /** As {@link #check} without asserting: for a test that shows a planted mistake is caught. */
    public List<Measurement> measure(Path dir) {
        List<Map<String, Object>> json = new ArrayList<>();
        List<GradientChecker.Analytic> fleet = new ArrayList<>();
        for (Case c : cases) {
            GradientChecker.Analytic a = c.op().analytic();
            fleet.add(a);
            Map<String, Tensor> in = new LinkedHashMap<>();
            c.op().inputs().forEach((slot, values) -> {
                for (int j = 0; j < values.size(); j++) {
                    in.put(slot + "." + j, values.get(j));
                }
            });
            a.lossWeights().forEach((slot, w) -> in.put("w." + slot, w));
            SafeTensors.write(dir.resolve(c.name() + ".in.safetensors"), in, Map.of());
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("name", c.name());
            entry.put("code", c.code());
            entry.put("checked", List.copyOf(a.gradients().keySet()));
            entry.put("outputs", List.copyOf(a.outputs().keySet()));
            json.add(entry);
        }
        try {
            new ObjectMapper().writeValue(dir.resolve("cases.json").toFile(), json);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        python(dir);
        List<Measurement> all = new ArrayList<>();
        for (int k = 0; k < cases.size(); k++) {
            Case c = cases.get(k);
            GradientChecker.Analytic a = fleet.get(k);
            Map<String, Tensor> torch = SafeTensors.read(dir.resolve(c.name() + ".out.safetensors"));
            a.outputs().forEach((slot, t) -> all.add(compare(c.name(), "out " + slot, t,
                    torch.get("out." + slot + ".f32"), torch.get("out." + slot + ".f64"))));
            a.gradients().forEach((slot, grads) -> {
                for (int j = 0; j < grads.size(); j++) {
                    String key = "grad." + slot + "." + j;
                    all.add(compare(c.name(), "grad " + slot + (grads.size() > 1 ? "[" + j + "]" : ""), grads.get(j),
                            torch.get(key + ".f32"), torch.get(key + ".f64")));
                }
            });
        }
        return all;
    }

    private static Measurement compare(String caseName, String what, Tensor fleet, Tensor torch32, Tensor torch64) {
        if (torch64 == null) {
            fail(caseName + ": PyTorch gave no " + what);
        }
        assertArrayEquals(torch64.shape(), fleet.shape(), caseName + " " + what + ": shape");
        assertEquals(fleet.numel(), torch32.numel());
        double fleetError = 0;
        double torchError = 0;
        double scale = 0;
        for (long i = 0; i < fleet.numel(); i++) {
            double ref = torch64.getDouble(i);
            double f = fleet.getDouble(i);
            fleetError = Double.isNaN(f) ? Double.POSITIVE_INFINITY : Math.max(fleetError, Math.abs(f - ref));
            torchError = Math.max(torchError, Math.abs(torch32.getDouble(i) - ref));
            scale = Math.max(scale, Math.abs(ref));
        }
        double bound = Math.max(NOISE_FACTOR * torchError, ULPS * Math.ulp((float) scale));
        return new Measurement(caseName, what, fleetError, torchError, bound);
    }

    private static void python(Path dir) {
        try {
            Path script = Path.of(TorchOpCheck.class.getResource("/interop/op_reference.py").toURI());
            Path log = dir.resolve("op_reference.log");
            Process p = new ProcessBuilder(PYTHON, script.toString(), dir.toString()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            if (!p.waitFor(300, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail(PYTHON + " " + script + " did not finish in 300 s");
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            if (out.contains("No module named 'torch'")) {
                fail("PyTorch is not installed for " + PYTHON + "; run scripts/install-deps.sh (it installs python3-torch)");
            }
            assertEquals(0, p.exitValue(), PYTHON + " " + script + " failed:\n" + out);
        } catch (IOException | URISyntaxException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
