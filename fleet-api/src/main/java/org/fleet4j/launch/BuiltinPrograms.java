package org.fleet4j.launch;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** The programs {@code fleetrun} knows by a short name; anything else is a main class or a jar. */
public final class BuiltinPrograms {
    private static final Map<String, String> MAIN_CLASSES;

    static {
        Map<String, String> catalog = new LinkedHashMap<>();
        catalog.put("mnist", "org.fleet4j.examples.Mnist");
        catalog.put("mlp_perf", "org.fleet4j.examples.MlpPerf");
        catalog.put("allreduce_perf", "org.fleet4j.collective.bench.AllreducePerf");
        catalog.put("grad_sync_perf", "org.fleet4j.examples.GradSyncPerf");
        catalog.put("ctr_data", "org.fleet4j.examples.CtrData");
        catalog.put("ctr", "org.fleet4j.examples.Ctr");
        catalog.put("ps_perf", "org.fleet4j.examples.PsPerf");
        MAIN_CLASSES = Collections.unmodifiableMap(catalog);
    }

    private BuiltinPrograms() {
    }

    public static Optional<String> mainClass(String name) {
        return Optional.ofNullable(MAIN_CLASSES.get(name));
    }

    /** Name to main class, in the order {@code --help} lists them. */
    public static Map<String, String> all() {
        return MAIN_CLASSES;
    }
}
