package org.fleet4j.gpu.exec;

import org.fleet4j.core.ir.Op;

/**
 * Makes the GPU kernel of one op instance, once per op when a plan is prepared; what the GPU's
 * {@link org.fleet4j.core.kernel.KernelLibrary}s register against the ops' specs.
 */
@FunctionalInterface
public interface GpuKernelFactory {
    GpuOpKernel create(Op op);
}
