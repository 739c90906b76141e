package org.fleet4j.collective;

/**
 * A backend for buffers in device memory ({@link CudaBuffer}), found through {@link java.util.ServiceLoader}
 * (listed in {@code META-INF/services/org.fleet4j.collective.DeviceBackendProvider}). A process group opens one the
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
