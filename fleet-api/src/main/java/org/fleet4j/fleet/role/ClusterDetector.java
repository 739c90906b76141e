package org.fleet4j.fleet.role;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.function.Predicate;

/**
 * The one place that finds which scheduler or launcher started this process: every registered
 * {@link ClusterEnvironment}, asked in order; the first whose variables are present describes the process. Used by
 * {@code Fleet.init} (through {@link EnvironmentRoleMaker}) and by {@code bin/fleetrun}.
 */
public final class ClusterDetector {
    private static final List<ClusterEnvironment> REGISTERED = ServiceLoader.load(ClusterEnvironment.class,
            ClusterDetector.class.getClassLoader()).stream().map(ServiceLoader.Provider::get)
            .sorted(Comparator.comparingInt(ClusterEnvironment::order).thenComparing(ClusterEnvironment::name)).toList();

    private final List<ClusterEnvironment> environments;

    private ClusterDetector(List<ClusterEnvironment> environments) {
        this.environments = environments;
    }

    /** Every registered environment. */
    public static ClusterDetector all() {
        return new ClusterDetector(REGISTERED);
    }

    /** The registered environments {@code keep} accepts (the launcher leaves out fleetrun's own variables). */
    public static ClusterDetector only(Predicate<ClusterEnvironment> keep) {
        return new ClusterDetector(REGISTERED.stream().filter(keep).toList());
    }

    public List<ClusterEnvironment> environments() {
        return environments;
    }

    /** The environment whose variables are present, if any. */
    public Optional<ClusterEnvironment> find(Map<String, String> env) {
        return environments.stream().filter(e -> e.isPresent(env)).findFirst();
    }

    /**
     * Where the process sits by the first environment present; empty when none is (a job of one).
     *
     * @throws IllegalArgumentException naming the missing or bad variable of an environment that is present
     */
    public Optional<Placement> detect(Map<String, String> env) {
        return find(env).map(e -> e.placement(env));
    }
}
