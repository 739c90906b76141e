package org.fleet4j.gpu;

import org.fleet4j.core.tensor.Bytes;

/**
 * What Fleet4J needs to know about one GPU.
 *
 * @param ordinal         CUDA's index of the device
 * @param name            e.g. "NVIDIA H100 80GB HBM3"
 * @param major           compute capability, major
 * @param minor           compute capability, minor
 * @param totalMemory     bytes of device memory
 * @param multiprocessors streaming multiprocessors
 */
public record DeviceProperties(int ordinal, String name, int major, int minor, long totalMemory, int multiprocessors) {
    /** The real architecture kernels are compiled for, e.g. "sm_90" for compute capability 9.0. */
    public String arch() {
        return "sm_" + major + minor;
    }

    @Override
    public String toString() {
        return "gpu:" + ordinal + " " + name + " (" + arch() + ", " + multiprocessors + " SMs, " + Bytes.format(totalMemory) + ")";
    }
}
