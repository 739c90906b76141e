package org.fleet4j.core.exec;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.tensor.Tensor;

/** The values of persistable vars (parameters, moments, counters) that outlive a single run. */
public final class Scope {
    private final Map<String, Tensor> values = new LinkedHashMap<>();

    public Tensor get(String name) {
        Tensor t = values.get(name);
        if (t == null) {
            throw new IrException("the scope has no var '" + name + "'; run the startup program first");
        }
        return t;
    }

    public Tensor find(String name) {
        return values.get(name);
    }

    public boolean contains(String name) {
        return values.containsKey(name);
    }

    public void put(String name, Tensor value) {
        values.put(name, value);
    }

    public void remove(String name) {
        values.remove(name);
    }

    public Set<String> names() {
        return Collections.unmodifiableSet(values.keySet());
    }

    /** A read-only view of every value by name, in creation order. */
    public Map<String, Tensor> asMap() {
        return Collections.unmodifiableMap(values);
    }
}
