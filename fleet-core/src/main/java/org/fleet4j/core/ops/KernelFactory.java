package org.fleet4j.core.ops;

import org.fleet4j.core.ir.Op;

/** Makes the kernel for one op; attributes are read here, once, not on every step. */
@FunctionalInterface
public interface KernelFactory {
    Kernel create(Op op);
}
