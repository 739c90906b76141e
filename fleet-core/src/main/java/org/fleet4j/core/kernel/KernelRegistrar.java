package org.fleet4j.core.kernel;

import java.util.function.Predicate;
import org.fleet4j.core.ir.Op;

/**
 * How a {@link KernelLibrary} registers its device's kernels. Each op type must be one the op registry knows (the
 * kernel belongs to that op's spec, {@code OpSpec.gradType} names a gradient op); a type is registered once per device.
 */
public interface KernelRegistrar<F> {
    /** A device kernel for every instance of {@code opType}. */
    default void kernel(String opType, F factory) {
        kernel(opType, op -> true, "", factory);
    }

    /**
     * A device kernel for the instances {@code handles} accepts ({@code scope} says which, in words: "float32 only");
     * the other instances take the host fallback, which must be declared for the type with {@link #hostFallback}.
     */
    void kernel(String opType, Predicate<Op> handles, String scope, F factory);

    /**
     * Declares that {@code opType}'s instances without a device kernel run their CPU kernel on host copies of their
     * values, and why that is acceptable (it runs once, outside the training step, or moves one scalar per step).
     */
    void hostFallback(String opType, String reason);
}
