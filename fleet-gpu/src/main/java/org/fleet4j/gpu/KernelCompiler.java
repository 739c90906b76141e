package org.fleet4j.gpu;

/** Turns CUDA C into a cubin for one GPU architecture. NVRTC in production; anything that yields the same in tests. */
public interface KernelCompiler {
    /**
     * @param arch the real architecture, e.g. "sm_90": a cubin, unlike PTX, loads on any driver that knows the GPU,
     *             even when the compiler is newer than the driver
     */
    byte[] compileToCubin(String moduleName, String source, String arch);

    /** The compiler and its version; part of the cache key, so a new compiler never reuses an old binary. */
    String identity();
}
