package org.fleet4j.collective;

/**
 * A backend for buffers in host memory, found through {@link java.util.ServiceLoader} (listed in
 * {@code META-INF/services/org.fleet4j.collective.BackendProvider}). Constructing one must load nothing heavy.
 */
public interface BackendProvider {
    Backend backend();

    /** Opens this rank's member of the group {@code ctx} describes; every member calls it. */
    AbstractProcessGroup open(GroupContext ctx);
}
