package org.fleet4j.core.kernel;

import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.OpRegistry;

/**
 * The one registry of kernels, keyed by op and device. A CPU kernel is the kernel factory of the op's own spec
 * ({@code OpSpec.kernel}); the kernels of other devices are registered against those specs by the
 * {@link KernelLibrary}s on the class path, with their host fallbacks declared. The dry run of a GPU world asks
 * {@link #placement} where each op would run; a device's executor asks {@link #of} for its factories.
 */
public final class KernelRegistry {
    private static final Map<DeviceKind, DeviceKernels<?>> TABLES = new ConcurrentHashMap<>();

    private KernelRegistry() {
    }

    /** The kernels of {@code device}, whose libraries all make them with factories of {@code factoryType}. */
    @SuppressWarnings("unchecked")
    public static <F> DeviceKernels<F> of(DeviceKind device, Class<F> factoryType) {
        DeviceKernels<?> table = table(device);
        for (KernelLibrary<?> library : libraries(device)) {
            if (!library.factoryType().equals(factoryType)) {
                throw new IllegalStateException(library.getClass().getName() + " makes " + device.displayName()
                        + " kernels with " + library.factoryType().getName() + ", not " + factoryType.getName());
            }
        }
        return (DeviceKernels<F>) table;
    }

    /** Where an op instance would run on a device of this kind: on the CPU wherever its spec has a kernel. */
    public static Placement placement(DeviceKind device, Op op) {
        if (device == DeviceKind.CPU) {
            return OpRegistry.get(op.type()).kernelFactory() != null
                    ? new Placement(Placement.Kind.DEVICE, "cpu kernel")
                    : new Placement(Placement.Kind.NONE, "its spec has no cpu kernel");
        }
        return table(device).placement(op);
    }

    private static DeviceKernels<?> table(DeviceKind device) {
        return TABLES.computeIfAbsent(device, KernelRegistry::load);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static DeviceKernels<?> load(DeviceKind device) {
        DeviceKernels table = new DeviceKernels<>(device);
        for (KernelLibrary library : libraries(device)) {
            library.register(table.registrar(library.getClass().getName()));
        }
        table.checkFallbacks();
        return table;
    }

    @SuppressWarnings("rawtypes")
    private static Iterable<KernelLibrary> libraries(DeviceKind device) {
        return ServiceLoader.load(KernelLibrary.class, KernelRegistry.class.getClassLoader()).stream()
                .map(ServiceLoader.Provider::get).filter(l -> l.device() == device).toList();
    }
}
