package org.fleet4j.core.kernel;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.OpRegistry;

/**
 * The kernels of one kind of device, by op type: what its {@link KernelLibrary}s registered. {@link #factory} gives an
 * op instance's device kernel factory (null: it takes the declared host fallback), {@link #placement} says where it
 * runs and why.
 */
public final class DeviceKernels<F> {
    private record Entry<F>(Predicate<Op> handles, String scope, F factory) {
    }

    private final DeviceKind device;
    private final Map<String, Entry<F>> kernels = new TreeMap<>();
    private final Map<String, String> hostFallbacks = new TreeMap<>();

    DeviceKernels(DeviceKind device) {
        this.device = device;
    }

    public DeviceKind device() {
        return device;
    }

    KernelRegistrar<F> registrar(String library) {
        return new KernelRegistrar<>() {
            @Override
            public void kernel(String opType, Predicate<Op> handles, String scope, F factory) {
                checkKnown(opType, library);
                if (kernels.putIfAbsent(opType, new Entry<>(handles, scope, factory)) != null) {
                    throw new IllegalStateException(library + " registers a " + device.displayName() + " kernel for "
                            + opType + ", which already has one");
                }
            }

            @Override
            public void hostFallback(String opType, String reason) {
                checkKnown(opType, library);
                hostFallbacks.put(opType, reason);
            }
        };
    }

    private void checkKnown(String opType, String library) {
        if (!OpRegistry.contains(opType)) {
            throw new IllegalStateException(library + " registers a " + device.displayName() + " kernel for op type '"
                    + opType + "', which no op library defines");
        }
    }

    /** Checks, once every library has registered, that each kernel that declines some instances has a fallback. */
    void checkFallbacks() {
        kernels.forEach((type, e) -> {
            if (!e.scope().isEmpty() && !hostFallbacks.containsKey(type)) {
                throw new IllegalStateException("the " + device.displayName() + " kernel of " + type + " handles "
                        + e.scope() + " but no host fallback is declared for the other instances");
            }
        });
    }

    /** The device kernel factory for this op instance, or null when it takes the host fallback or has none. */
    public F factory(Op op) {
        Entry<F> e = kernels.get(op.type());
        return e != null && e.handles().test(op) ? e.factory() : null;
    }

    /** Where this op instance runs on the device, and why. */
    public Placement placement(Op op) {
        Entry<F> e = kernels.get(op.type());
        if (e != null && e.handles().test(op)) {
            return new Placement(Placement.Kind.DEVICE, e.scope().isEmpty() ? device.displayName() + " kernel"
                    : device.displayName() + " kernel (" + e.scope() + ")");
        }
        String why = hostFallbacks.get(op.type());
        if (why != null) {
            return new Placement(Placement.Kind.HOST_FALLBACK, why);
        }
        return new Placement(Placement.Kind.NONE, e != null
                ? "its " + device.displayName() + " kernel handles " + e.scope() + " only, and no host fallback is declared"
                : "no " + device.displayName() + " kernel and no host fallback");
    }

    /** Op types with a device kernel. */
    public Set<String> kernelTypes() {
        return Collections.unmodifiableSet(kernels.keySet());
    }

    /** Op types that may run through their CPU kernel, with the reason. */
    public Map<String, String> hostFallbacks() {
        return Collections.unmodifiableMap(hostFallbacks);
    }

    /** Whether an op type can run on the device at all (a kernel or a declared fallback). */
    public boolean covers(String type) {
        return kernels.containsKey(type) || hostFallbacks.containsKey(type);
    }
}
