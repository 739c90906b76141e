package org.fleet4j.core.device;

/**
 * Service interface through which a device kind other than the CPU is found at run time ({@link java.util.ServiceLoader}),
 * so that fleet-core never links against a vendor library. Constructing a provider must be cheap and must not load
 * native code: that happens in {@link #deviceCount()} and {@link #open(int)}.
 */
public interface DeviceProvider {
    /** The kind this provider serves, e.g. "gpu". */
    String kind();

    /** How many devices of this kind the machine has; throws {@link DeviceUnavailableException} when the driver is missing. */
    int deviceCount();

    /** Opens device {@code ordinal}; throws {@link DeviceUnavailableException} naming what is missing. */
    Device open(int ordinal);
}
