package org.fleet4j.fleet;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.tensor.Tensor;

/**
 * The state a program carries from step to step: its persistable vars that are not fed (parameters, optimizer
 * moments, beta powers, learning-rate step counters), in the program's order, with their values in a scope.
 */
final class Persistables {
    private Persistables() {
    }

    /** Name to the scope's tensor for each persistable var of {@code program}; fails naming the vars the scope lacks. */
    static Map<String, Tensor> of(Program program, Scope scope, String action) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        List<String> absent = new ArrayList<>();
        for (Var v : program.globalBlock().vars()) {
            if (v.persistable() && !v.isData()) {
                Tensor t = scope.find(v.name());
                if (t == null) {
                    absent.add(v.name());
                } else {
                    m.put(v.name(), t);
                }
            }
        }
        if (!absent.isEmpty()) {
            throw new IllegalStateException(action + ": the scope has no value for the persistable vars " + absent
                    + "; run the startup program first");
        }
        return m;
    }
}
