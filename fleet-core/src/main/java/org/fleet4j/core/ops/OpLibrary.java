package org.fleet4j.core.ops;

import java.util.List;

/**
 * Op types that a module above fleet-core defines (the collective ops of ops-fusion), found through
 * {@link java.util.ServiceLoader} when the {@link OpRegistry} is first used, so no caller has to register them first.
 */
public interface OpLibrary {
    /** The specs to register, each with its gradient op when it is differentiable. */
    List<OpSpec> specs();
}
