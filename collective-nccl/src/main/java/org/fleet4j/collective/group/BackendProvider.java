package org.fleet4j.collective.group;

import org.fleet4j.collective.Backend;

/**
 * A backend for buffers in host memory, found through {@link java.util.ServiceLoader} (a provider registers itself
 * with {@code @AutoService(BackendProvider.class)}). Constructing one must load nothing heavy. "auto" opens a group
 * with the available provider of the highest priority for the group's locality (see {@link BackendChoice}).
 */
public interface BackendProvider {
    Backend backend();

    /** Whether this backend can run a group of this locality, and how much it is preferred there. */
    Suitability suitability(Locality locality);

    /** Opens this rank's member of the group {@code ctx} describes; every member calls it. */
    AbstractProcessGroup open(GroupContext ctx);
}
