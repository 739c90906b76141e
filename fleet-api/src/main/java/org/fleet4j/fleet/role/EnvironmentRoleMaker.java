package org.fleet4j.fleet.role;

import java.util.Map;
import org.fleet4j.cluster.Role;

/**
 * The role from whichever scheduler or launcher started this process ({@link ClusterDetector}); with none of them
 * the process is a world of one.
 */
public final class EnvironmentRoleMaker implements RoleMaker {
    private final Map<String, String> env;

    public EnvironmentRoleMaker(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    /** The role from this process's own environment. */
    public static EnvironmentRoleMaker fromSystem() {
        return new EnvironmentRoleMaker(System.getenv());
    }

    /** The environment whose variables are present, or null for none. */
    public ClusterEnvironment detect() {
        return ClusterDetector.all().find(env).orElse(null);
    }

    @Override
    public Role role() {
        return ClusterDetector.all().detect(env).map(Placement::role).orElseGet(Role::single);
    }
}
