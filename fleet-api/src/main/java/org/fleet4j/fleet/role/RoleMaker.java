package org.fleet4j.fleet.role;

import org.fleet4j.cluster.Role;

/**
 * Tells a process its role in the job. Implementations read it from a launcher's environment; users with
 * their own scheduler implement this (or use {@link UserDefinedRoleMaker}).
 */
@FunctionalInterface
public interface RoleMaker {
    /** The role; throws an {@link IllegalArgumentException} naming the variable or value that is missing or wrong. */
    Role role();
}
