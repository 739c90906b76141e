package org.fleet4j.collective.nccl;

import org.bytedeco.javacpp.Loader;
import org.fleet4j.collective.CollectiveException;

/**
 * Links JavaCPP's NCCL binding (and the CUDA runtime binding it builds on) on first use and turns the JVM's link
 * errors into one line naming the missing shared object and what to install. The outcome is remembered, so a failed
 * load fails the same way again instead of with the JVM's bare "Could not initialize class".
 */
public final class NcclLibrary {
    private static final String[] BINDINGS = {"org.bytedeco.cuda.global.cudart", "org.bytedeco.cuda.global.nccl"};
    private static CollectiveException failure;
    private static boolean loaded;

    private NcclLibrary() {
    }

    /** Loads the binding or throws {@link CollectiveException} saying what is missing. */
    public static synchronized void require() {
        if (failure != null) {
            throw failure;
        }
        if (loaded) {
            return;
        }
        try {
            for (String binding : BINDINGS) {
                Loader.load(Class.forName(binding, false, NcclLibrary.class.getClassLoader()));
            }
            loaded = true;
        } catch (ClassNotFoundException | LinkageError | IllegalStateException e) {
            failure = new CollectiveException(explain(e, System.getenv("LD_LIBRARY_PATH")), e);
            throw failure;
        }
    }

    /** Why the binding could not be linked, in words that say what to do. */
    static String explain(Throwable error, String ldLibraryPath) {
        String path = ldLibraryPath == null || ldLibraryPath.isBlank() ? "LD_LIBRARY_PATH is not set"
                : "LD_LIBRARY_PATH=" + ldLibraryPath;
        if (error instanceof ClassNotFoundException
                || error instanceof NoClassDefFoundError && !String.valueOf(error.getMessage()).contains("initialize")) {
            return "the nccl backend needs JavaCPP's CUDA binding, which is not on the class path (" + error.getMessage()
                    + "): add org.bytedeco:cuda and org.bytedeco:javacpp (and their linux-x86_64 classifier jars)";
        }
        String missing = SharedObjects.missingIn(error);
        if (missing == null) { // e.g. the runtime's binding failed earlier in this JVM, and the JVM kept no detail
            Throwable root = error;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            return "the nccl backend cannot link JavaCPP's CUDA and NCCL bindings (" + root.getClass().getSimpleName()
                    + ": " + root.getMessage() + "): install the NVIDIA driver, the CUDA 13 runtime (libcudart.so.13)"
                    + " and NCCL (libnccl.so.2), and put their lib directories on LD_LIBRARY_PATH (" + path + ")";
        }
        String install;
        if (missing.startsWith("libcuda.so")) {
            install = "install the NVIDIA driver (nvidia-smi must work), or in a container start it with --gpus all";
        } else if (missing.startsWith("libnccl")) {
            install = "pip install nvidia-nccl-cu13 or apt install libnccl2 (built for CUDA 13)";
        } else {
            install = "install the CUDA 13 runtime (pip install nvidia-cuda-runtime or apt install cuda-cudart-13-1)";
        }
        return "the nccl backend cannot load " + missing + ", needed for collectives on GPU memory: " + install
                + ", and put its lib directory on LD_LIBRARY_PATH (" + path + ")";
    }
}
