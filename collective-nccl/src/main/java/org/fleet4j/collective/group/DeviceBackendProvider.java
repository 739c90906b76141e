package org.fleet4j.collective.group;

import org.fleet4j.collective.Backend;

/**
 * A backend for buffers in device memory ({@link CudaBuffer}), found through {@link java.util.ServiceLoader}
 * (a provider registers itself with {@code @AutoService(DeviceBackendProvider.class)}). A process group opens one the
 * first time a device buffer meets it, so constructing a provider must load no native binding.
 */
public interface DeviceBackendProvider {
    Backend backend();

    /**
     * Opens this rank's communicator on CUDA device {@code device} over the ranks of {@code ctx}, exchanging what it
     * needs through {@code ctx.store()}; every member calls it. Throws {@link CollectiveException} naming what is
     * missing when the binding or the library cannot be loaded.
     */
    DeviceCommunicator open(GroupContext ctx, int device);
}
