package org.fleet4j.collective.group;

import java.util.List;
import java.util.ServiceLoader;
import java.util.stream.Collectors;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.CollectiveException;

/** The backends registered through {@link java.util.ServiceLoader}, looked up by name. */
final class Backends {
    private static final List<BackendProvider> HOST = ServiceLoader.load(BackendProvider.class,
            Backends.class.getClassLoader()).stream().map(ServiceLoader.Provider::get).toList();

    private Backends() {
    }

    static List<BackendProvider> hostProviders() {
        return HOST;
    }

    static BackendProvider host(Backend backend) {
        for (BackendProvider p : HOST) {
            if (p.backend().equals(backend)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown backend '" + backend + "'; expected auto or one of "
                + HOST.stream().map(p -> p.backend().name()).collect(Collectors.joining(", "))
                + " (the host backends registered as " + BackendProvider.class.getName() + ")");
    }

    /**
     * The device backend for CUDA buffers. Looked up only when a device buffer meets a group, so that CPU runs never
     * instantiate it; {@code what} names the call that needs it, for the error when none is registered.
     */
    static DeviceBackendProvider cuda(String what) {
        List<DeviceBackendProvider> found = ServiceLoader.load(DeviceBackendProvider.class,
                Backends.class.getClassLoader()).stream().map(ServiceLoader.Provider::get).toList();
        if (found.isEmpty()) {
            throw new CollectiveException(what + ": no device backend is registered (as "
                    + DeviceBackendProvider.class.getName() + "); put fleet4j-collective, which provides nccl, on the"
                    + " class path");
        }
        if (found.size() > 1) {
            throw new CollectiveException(what + ": several device backends are registered ("
                    + found.stream().map(p -> p.backend().name()).collect(Collectors.joining(", "))
                    + "); keep one on the class path");
        }
        return found.getFirst();
    }
}
