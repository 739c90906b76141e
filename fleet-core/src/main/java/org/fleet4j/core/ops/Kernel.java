package org.fleet4j.core.ops;

/** The CPU implementation of one op instance, created once per op when a plan is prepared and run every step. */
@FunctionalInterface
public interface Kernel {
    void run(KernelArgs args);
}
