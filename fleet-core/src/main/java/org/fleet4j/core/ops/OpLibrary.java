package org.fleet4j.core.ops;

import java.util.List;

/**
 * A family of op types (fleet-core's built-in ones, the fused and collective ops, the parameter-server ops, a user's),
 * registered beside its code with {@code @AutoService(OpLibrary.class)} and found through
 * {@link java.util.ServiceLoader} when the {@link OpRegistry} is first used, so no caller has to register them first.
 */
public interface OpLibrary {
    /** The specs to register, each with its gradient op when it is differentiable. */
    List<OpSpec> specs();
}
