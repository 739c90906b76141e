package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.core.drift.TrainingRecord;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.io.TorchStateDict;
import org.fleet4j.core.models.Classifier;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * The PyTorch side of the CNN parity tests: {@code scripts/peers/torch_cnn.py parity}, run once for a list of cases,
 * writes per case PyTorch's initial state_dict, the sample order and PyTorch's training in float64 (the yardstick), in
 * float32 (its own float32 noise) and, in float64, with each planted mistake the case names; and Fleet4J's checkpoints
 * are read under PyTorch's names, so that both sides are records of the same tensors.
 */
final class TorchCnnReference {
    private static final String PYTHON = "/usr/bin/python3";
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    private static final Path SCRIPT = ROOT.resolve("scripts/peers/torch_cnn.py");

    /**
     * One training: its model (lenet, or resnet of depth and width), steps, global batch, optimizer (momentum or
     * adamw), learning rate (warmup_cosine with warmup steps when warmup > 0, else constant), weight decay, clip
     * norm (0: none), seed of PyTorch's initialisation and of the sample order, the mistakes to run beside it, and
     * the folder of the MNIST IDX files both sides read.
     */
    record Case(String name, String model, int depth, int width, int steps, int batch, String optimizer, double lr,
                double weightDecay, double clip, int warmup, int seed, List<String> mistakes, Path data) {
        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("data_dir", data.toString());
            m.put("model", model);
            m.put("depth", depth);
            m.put("width", width);
            m.put("steps", steps);
            m.put("batch", batch);
            m.put("optimizer", optimizer);
            m.put("lr", lr);
            m.put("weight_decay", weightDecay);
            m.put("clip", clip);
            m.put("schedule", warmup > 0 ? "warmup_cosine" : "constant");
            m.put("warmup", warmup);
            m.put("seed", seed);
            m.put("perturbed_runs", PERTURBED_RUNS);
            m.put("mistakes", mistakes);
            return m;
        }

        /** The Fleet4J program's flags for the same training, from the files PyTorch wrote in {@code dir}. */
        List<String> programArgs(Path dir) {
            List<String> a = new ArrayList<>(List.of("--steps", "" + steps, "--global_batch", "" + batch,
                    "--optimizer", optimizer, "--lr", "" + lr, "--weight_decay", "" + weightDecay,
                    "--clip_grad_norm", "" + clip, "--seed", "" + seed, "--data_dir", data.toString(),
                    "--init_torch", dir.resolve(name).resolve("init.safetensors").toString(),
                    "--sample_order", dir.resolve(name).resolve("order.txt").toString()));
            if (warmup > 0) {
                a.addAll(List.of("--lr_schedule", "warmup_cosine", "--warmup_steps", "" + warmup));
            }
            if (model.equals("resnet")) {
                a.addAll(List.of("--depth", "" + depth, "--width", "" + width));
            }
            return a;
        }
    }

    /**
     * Float32 trainings of each case beside PyTorch's own: started one ulp away, each another sample of float32 noise.
     * One sample misses what a few see: a ReLU input within rounding of 0 that one float32 run sends the other way
     * moves every later weight by far more than rounding does (700 times it, in a resnet under momentum).
     */
    static final int PERTURBED_RUNS = 3;

    private TorchCnnReference() {
    }

    /** Runs the PyTorch side for every case into {@code dir}; fails with its output if it does not finish in time. */
    static void run(List<Case> cases, Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path file = dir.resolve("cases.json");
        new ObjectMapper().writeValue(file.toFile(), cases.stream().map(Case::json).toList());
        Process p = new ProcessBuilder(PYTHON, SCRIPT.toString(), "parity", file.toString(), dir.toString())
                .redirectErrorStream(true).start();
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(PYTHON + " " + SCRIPT + " parity did not finish in 300 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (out.contains("No module named 'torch'")) {
            fail("PyTorch is not installed for " + PYTHON + "; run scripts/install-deps.sh (it installs python3-torch)");
        }
        assertEquals(0, p.exitValue(), PYTHON + " " + SCRIPT + " parity failed:\n" + out);
    }

    /** PyTorch's run {@code tag} (f64, f32, or a mistake's name) of a case: its final state and every step's loss. */
    static TrainingRecord reference(Path dir, String caseName, String tag) {
        Map<String, Tensor> all = SafeTensors.read(dir.resolve(caseName).resolve("reference.safetensors"));
        Map<String, float[]> state = new LinkedHashMap<>();
        double[] losses = null;
        for (var e : all.entrySet()) {
            if (!e.getKey().startsWith(tag + "/")) {
                continue;
            }
            String name = e.getKey().substring(tag.length() + 1);
            Tensor t = e.getValue();
            if (name.equals("loss")) {
                losses = new double[(int) t.numel()];
                for (int i = 0; i < losses.length; i++) {
                    losses[i] = t.getDouble(i);
                }
            } else {
                float[] v = new float[(int) t.numel()];
                for (int i = 0; i < v.length; i++) {
                    v[i] = (float) t.getDouble(i);
                }
                state.put(name, v);
            }
        }
        if (losses == null) {
            fail(dir.resolve(caseName) + "/reference.safetensors has no run '" + tag + "'");
        }
        return new TrainingRecord(state, losses);
    }

    /**
     * PyTorch's float32 noise of a case as one record: per value and per step's loss, whichever of its float32 runs
     * (f32 and the runs one ulp away) is furthest from its float64 run, so that its drift from that run is, per
     * tensor and per step, the largest of theirs.
     */
    static TrainingRecord furthestFloat32(Path dir, String caseName) {
        TrainingRecord exact = reference(dir, caseName, "f64");
        List<TrainingRecord> runs = new ArrayList<>(List.of(reference(dir, caseName, "f32")));
        for (int k = 1; k <= PERTURBED_RUNS; k++) {
            runs.add(reference(dir, caseName, "f32_ulp" + k));
        }
        Map<String, float[]> state = new LinkedHashMap<>();
        exact.parameters().forEach((name, e) -> {
            float[] furthest = e.clone();
            for (TrainingRecord r : runs) {
                float[] v = r.parameters().get(name);
                for (int i = 0; i < v.length; i++) {
                    if (Math.abs((double) v[i] - e[i]) > Math.abs((double) furthest[i] - e[i])) {
                        furthest[i] = v[i];
                    }
                }
            }
            state.put(name, furthest);
        });
        double[] losses = exact.losses().clone();
        for (TrainingRecord r : runs) {
            for (int s = 0; s < losses.length; s++) {
                if (Math.abs(r.losses()[s] - exact.losses()[s]) > Math.abs(losses[s] - exact.losses()[s])) {
                    losses[s] = r.losses()[s];
                }
            }
        }
        return new TrainingRecord(state, losses);
    }

    /** PyTorch's initial state of a case (its init.safetensors, float tensors) as a record with {@code losses}. */
    static TrainingRecord initial(Path dir, String caseName, double[] losses) {
        Map<String, Tensor> floats = new LinkedHashMap<>();
        SafeTensors.read(dir.resolve(caseName).resolve("init.safetensors")).forEach((name, t) -> {
            if (t.dtype() == DType.F32) {
                floats.put(name, t);
            }
        });
        return TrainingRecord.of(floats, losses);
    }

    /**
     * A Fleet4J run of {@code net}'s model as a record under PyTorch's names: the model's weights and batch-norm
     * statistics from its checkpoint (fc weights transposed to nn.Linear's layout), with the losses of its curve.
     */
    static TrainingRecord fleetUnderTorchNames(Classifier net, Path checkpoint, double[] losses, Path scratch) {
        Scope scope = new Scope();
        SafeTensors.read(checkpoint).forEach(scope::put);
        Path renamed = scratch.resolve(checkpoint.getFileName() + ".torch.safetensors");
        TorchStateDict.byLayerNames(net.test()).save(renamed, scope);
        Map<String, Tensor> floats = new LinkedHashMap<>();
        SafeTensors.read(renamed).forEach((name, t) -> {
            if (t.dtype() == DType.F32) {
                floats.put(name, t);
            }
        });
        return TrainingRecord.of(floats, losses);
    }
}
