package org.fleet4j.core.io;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.tensor.Tensor;

/**
 * The weights of a model, what PyTorch calls its state_dict: every parameter (trainable or frozen) and every other
 * persistable var the forward ops read or write (batch-norm running statistics). Optimizer moments and step counters
 * are not part of it: only ops after the first gradient op (backward, then the optimizer) touch them.
 */
public final class ModelState {
    private ModelState() {
    }

    /** The names of the model's weights, in the program's var order. */
    public static List<String> names(Program program) {
        Set<String> forward = new LinkedHashSet<>();
        for (Op op : program.globalBlock().ops()) {
            if (op.allOutputs().stream().anyMatch(n -> n.contains(Backward.GRAD_SUFFIX))) {
                break;
            }
            forward.addAll(op.allInputs());
            forward.addAll(op.allOutputs());
        }
        List<String> names = new ArrayList<>();
        for (Var v : program.globalBlock().vars()) {
            if (!v.isData() && (v.isParameter() || (v.persistable() && forward.contains(v.name())))) {
                names.add(v.name());
            }
        }
        return names;
    }

    /** Name to the scope's tensor for each weight of {@code program}; fails naming those the scope lacks. */
    public static Map<String, Tensor> of(Program program, Scope scope) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        List<String> absent = new ArrayList<>();
        for (String name : names(program)) {
            Tensor t = scope.find(name);
            if (t == null) {
                absent.add(name);
            } else {
                m.put(name, t);
            }
        }
        if (!absent.isEmpty()) {
            throw new IllegalStateException("the scope has no value for the weights " + absent + "; run the startup program first");
        }
        return m;
    }
}
