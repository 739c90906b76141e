package org.fleet4j.core.ops;

import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.text.Quoted;

/**
 * All op types by name: those of every {@link OpLibrary} on the class path (each family of ops is one, found through
 * {@link ServiceLoader}: the built-in ones of fleet-core, the fused and collective ops, the parameter-server ops) are
 * registered on first use; users may register their own.
 */
public final class OpRegistry {
    private static final Map<String, OpSpec> SPECS = new ConcurrentHashMap<>();

    static {
        for (OpLibrary library : ServiceLoader.load(OpLibrary.class, OpRegistry.class.getClassLoader())) {
            library.specs().forEach(OpRegistry::register);
        }
    }

    private OpRegistry() {
    }

    /** Registers an op and, when it is differentiable, its gradient op. */
    public static void register(OpSpec spec) {
        SPECS.put(spec.type(), spec);
        if (spec.differentiable()) {
            OpSpec g = spec.gradSpec();
            SPECS.put(g.type(), g);
        }
    }

    public static OpSpec get(String type) {
        OpSpec s = SPECS.get(type);
        if (s == null) {
            throw new IrException("unknown op type " + Quoted.of(type) + " (known: " + new TreeMap<>(SPECS).keySet() + ")");
        }
        return s;
    }

    public static boolean contains(String type) {
        return SPECS.containsKey(type);
    }

    public static java.util.Set<String> types() {
        return new java.util.TreeSet<>(SPECS.keySet());
    }
}
