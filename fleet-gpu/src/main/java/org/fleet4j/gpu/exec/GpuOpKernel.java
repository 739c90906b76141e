package org.fleet4j.gpu.exec;

import org.fleet4j.gpu.GpuDevice;

/** The GPU implementation of one op instance, made once per op when a plan is prepared and run every step. */
@FunctionalInterface
public interface GpuOpKernel {
    void run(GpuOpArgs args);

    /** Gives back device memory the kernel keeps for itself (scratch), when its plan is dropped. */
    default void release(GpuDevice device) {
    }
}
