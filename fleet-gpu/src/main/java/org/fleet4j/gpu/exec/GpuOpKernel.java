package org.fleet4j.gpu.exec;

/** The GPU implementation of one op instance, made once per op when a plan is prepared and run every step. */
@FunctionalInterface
public interface GpuOpKernel {
    void run(GpuOpArgs args);
}
