package org.fleet4j.core.io;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.text.Quoted;

/**
 * Loads a weights-only safetensors file (another framework's state_dict, or {@link #save}'s output) into a model's
 * {@link ModelState} after its startup program ran: the optimizer's state keeps its initial values. All or nothing:
 * every name, shape and value is checked before any weight is written. Floating values are converted to the weight's
 * dtype (F16, BF16, F32, F64 in any direction), integer ones (U8, I32, I64) to an integer weight.
 */
public final class Parameters {
    private Parameters() {
    }

    /** Loads {@code file} into the weights of {@code program} held by {@code scope} (a plain Executor's scope). */
    public static LoadReport load(Path file, Program program, Scope scope, ParameterLoadOptions options) {
        return loadInto(file, ModelState.of(program, scope), options);
    }

    /**
     * As {@link #load(Path, Program, Scope, ParameterLoadOptions)} for a program that {@code runner} runs: the
     * device's current values are written to the scope first and the device rereads the scope after, so the weights
     * a device holds are replaced too and nothing else it holds is lost.
     */
    public static LoadReport load(Path file, Program program, Scope scope, ProgramRunner runner, ParameterLoadOptions options) {
        runner.syncToScope(scope);
        LoadReport report = load(file, program, scope, options);
        runner.scopeChanged();
        return report;
    }

    /** Writes the weights of {@code program} from {@code scope} to {@code file} (atomically), under their own names. */
    public static void save(Path file, Program program, Scope scope) {
        SafeTensors.write(file, ModelState.of(program, scope), Map.of("format", "fleet4j-weights"));
    }

    /** Loads {@code file} into {@code targets} (the model's name to its tensor), as {@link #load} describes. */
    public static LoadReport loadInto(Path file, Map<String, Tensor> targets, ParameterLoadOptions options) {
        return loadInto(file, SafeTensors.read(file), targets, options);
    }

    /** Loads {@code tensors}, read from {@code file} (and perhaps converted), into {@code targets}. */
    static LoadReport loadInto(Path file, Map<String, Tensor> tensors, Map<String, Tensor> targets, ParameterLoadOptions options) {
        Map<String, Tensor> renamed = new LinkedHashMap<>();
        Map<String, String> theirName = new HashMap<>();
        List<String> unexpected = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            String ours = options.nameMap().apply(e.getKey());
            if (ours == null || !targets.containsKey(ours)) {
                unexpected.add(ours == null || ours.equals(e.getKey()) ? e.getKey() : e.getKey() + " (as " + ours + ")");
            } else if (theirName.putIfAbsent(ours, e.getKey()) != null) {
                problems.add(Quoted.bare(e.getKey()) + " and " + Quoted.bare(theirName.get(ours)) + " both map to " + ours);
            } else {
                renamed.put(ours, e.getValue());
            }
        }
        List<String> missing = new ArrayList<>();
        Map<String, Tensor> converted = new LinkedHashMap<>();
        for (Map.Entry<String, Tensor> e : targets.entrySet()) {
            String name = e.getKey();
            Tensor want = e.getValue();
            Tensor have = renamed.get(name);
            String label = theirName.getOrDefault(name, name).equals(name) ? name : Quoted.bare(theirName.get(name)) + " (as " + name + ")";
            if (have == null) {
                missing.add(name);
            } else if (!want.hasShape(have.shape())) {
                problems.add(label + " has shape " + Shapes.str(have.shape()) + ", the model expects " + Shapes.str(want.shape()));
            } else if (have.dtype().isFloating() != want.dtype().isFloating()) {
                problems.add(label + " is " + have.dtype().displayName() + ", the model's " + name + " is "
                        + want.dtype().displayName() + "; only floating to floating or integer to integer converts");
            } else {
                Tensor value = have.dtype() == want.dtype() ? have : have.to(want.dtype());
                String nonFinite = options.allowNonFinite() ? null : SafeTensors.nonFinite(label, value);
                if (nonFinite != null) {
                    problems.add(nonFinite);
                } else {
                    converted.put(name, value);
                }
            }
        }
        if (options.strict() && !missing.isEmpty()) {
            problems.add("the file lacks the model's " + SafeTensors.summary(missing));
        }
        if (options.strict() && !unexpected.isEmpty()) {
            problems.add("the file holds tensors the model does not have: " + SafeTensors.summary(unexpected)
                    + " (map their names, or load non-strict to skip them)");
        }
        if (!problems.isEmpty()) {
            throw new CheckpointException(file, null, (problems.size() == 1 ? problems.getFirst()
                    : problems.size() + " problems:\n  " + String.join("\n  ", problems)) + "; nothing was loaded");
        }
        converted.forEach((name, value) -> targets.get(name).copyFrom(value));
        return new LoadReport(List.copyOf(converted.keySet()), missing, unexpected);
    }
}
