package org.fleet4j.core.device;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import org.fleet4j.text.Quoted;

/**
 * Finds devices by name: "cpu", "gpu" (the first GPU) or "gpu:N". Every kind but the CPU comes from a
 * {@link DeviceProvider} on the classpath, looked up only when such a device is asked for, so a CPU-only run never
 * loads a vendor library.
 */
public final class Devices {
    /** The variable through which the launcher tells each rank its device ("cpu", "gpu:1"). */
    public static final String DEVICE_ENV = "FLEET_DEVICE";

    private Devices() {
    }

    public static Device cpu() {
        return CpuDevice.INSTANCE;
    }

    /** The device the launcher assigned to this process, or the CPU when it assigned none. */
    public static Device forThisProcess() {
        String name = System.getenv(DEVICE_ENV);
        return name == null || name.isBlank() ? cpu() : find(name, Devices.class.getClassLoader(), DEVICE_ENV);
    }

    /**
     * The kind of device a name such as {@code FLEET_DEVICE}'s gives ("gpu" for "gpu:1"), without opening it; "cpu" when
     * there is no name.
     */
    public static String kindOf(String name) {
        if (name == null || name.isBlank()) {
            return "cpu";
        }
        String n = name.trim().toLowerCase(Locale.ROOT);
        int colon = n.indexOf(':');
        return colon < 0 ? n : n.substring(0, colon);
    }

    public static Device find(String name) {
        return find(name, Devices.class.getClassLoader(), "device");
    }

    /** As {@link #find(String)}, looking for providers through {@code loader}; {@code what} names the source of the name in errors. */
    public static Device find(String name, ClassLoader loader, String what) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        int colon = n.indexOf(':');
        String kind = kindOf(name);
        int ordinal = colon < 0 ? 0 : parseOrdinal(name, n.substring(colon + 1), what);
        if (kind.equals("cpu")) {
            if (ordinal != 0) {
                throw new IllegalArgumentException(what + " " + Quoted.of(name) + ": there is one cpu device, write 'cpu'");
            }
            return cpu();
        }
        List<DeviceProvider> providers = providers(loader);
        for (DeviceProvider p : providers) {
            if (p.kind().equals(kind)) {
                int count = p.deviceCount();
                if (ordinal >= count) {
                    throw new DeviceUnavailableException(what + " " + Quoted.of(name) + " asked for, but this machine has "
                            + count + " " + kind + " device" + (count == 1 ? "" : "s")
                            + (count == 0 ? "" : " (" + kind + ":0.." + kind + ":" + (count - 1) + ")"));
                }
                return p.open(ordinal);
            }
        }
        if (kind.equals("gpu")) {
            throw new DeviceUnavailableException("no GPU support on the classpath: " + what + " " + Quoted.of(name)
                    + " needs the fleet4j-gpu jar and the CUDA bindings (org.bytedeco:cuda and org.bytedeco:javacpp,"
                    + " classifier linux-x86_64) on the classpath; see docs/GPU.md");
        }
        List<String> kinds = new ArrayList<>(List.of("cpu"));
        providers.forEach(p -> kinds.add(p.kind()));
        throw new IllegalArgumentException("unknown " + what + " " + Quoted.of(name) + "; expected one of " + kinds
                + " optionally followed by :<index>, e.g. gpu:1");
    }

    private static int parseOrdinal(String name, String digits, String what) {
        try {
            int ordinal = Integer.parseInt(digits);
            if (ordinal >= 0) {
                return ordinal;
            }
        } catch (NumberFormatException e) {
            // reported below with the whole name
        }
        throw new IllegalArgumentException(what + " " + Quoted.of(name) + ": the index after ':' must be a whole number >= 0");
    }

    private static List<DeviceProvider> providers(ClassLoader loader) {
        List<DeviceProvider> found = new ArrayList<>();
        try {
            ServiceLoader.load(DeviceProvider.class, loader).forEach(found::add);
        } catch (ServiceConfigurationError e) {
            throw new DeviceUnavailableException("a device provider on the classpath could not be loaded: "
                    + e.getMessage() + "; check that the fleet4j-gpu jar matches this fleet4j-core", e);
        }
        return found;
    }
}
