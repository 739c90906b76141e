package org.fleet4j.core.ops;

import org.fleet4j.core.ir.Op;

/**
 * Makes the kernel for one op; attributes are read here, once, not on every step, and so is what the kernel needs
 * from the job's {@link ExecContext} (its ring's group, its buffers' placement).
 */
@FunctionalInterface
public interface KernelFactory {
    Kernel create(Op op, ExecContext context);
}
