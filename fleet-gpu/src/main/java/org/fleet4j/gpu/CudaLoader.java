package org.fleet4j.gpu;

import java.util.EnumMap;
import java.util.Map;
import org.bytedeco.javacpp.Loader;
import org.fleet4j.collective.nccl.SharedObjects;
import org.fleet4j.core.device.DeviceUnavailableException;

/**
 * Links the CUDA bindings on first use and turns the JVM's link errors into messages that name the missing shared
 * object and what to install. The outcome is remembered: a library that failed to load fails the same way again
 * instead of with the JVM's bare "Could not initialize class".
 */
public final class CudaLoader {
    private static final Map<CudaLibrary, RuntimeException> FAILURES = new EnumMap<>(CudaLibrary.class);
    private static final Map<CudaLibrary, Boolean> LOADED = new EnumMap<>(CudaLibrary.class);

    private CudaLoader() {
    }

    /** Loads the binding of {@code library} (and the runtime it builds on) or throws {@link DeviceUnavailableException}. */
    public static synchronized void require(CudaLibrary library) {
        if (library != CudaLibrary.RUNTIME) {
            require(CudaLibrary.RUNTIME);
        }
        RuntimeException failed = FAILURES.get(library);
        if (failed != null) {
            throw failed;
        }
        if (LOADED.containsKey(library)) {
            return;
        }
        try {
            Loader.load(Class.forName(library.bindingClass(), false, CudaLoader.class.getClassLoader()));
            LOADED.put(library, true);
        } catch (ClassNotFoundException | LinkageError | IllegalStateException e) {
            DeviceUnavailableException explained = explain(library, e, System.getenv("LD_LIBRARY_PATH"));
            FAILURES.put(library, explained);
            throw explained;
        }
    }

    /** Why {@code library} could not be linked, in words that say what to do. */
    static DeviceUnavailableException explain(CudaLibrary library, Throwable error, String ldLibraryPath) {
        String path = ldLibraryPath == null || ldLibraryPath.isBlank() ? "LD_LIBRARY_PATH is not set"
                : "LD_LIBRARY_PATH=" + ldLibraryPath;
        if (error instanceof ClassNotFoundException || error instanceof NoClassDefFoundError && !String.valueOf(error.getMessage()).contains("initialize")) {
            return new DeviceUnavailableException("the CUDA bindings are not on the classpath (" + error.getMessage()
                    + "): add org.bytedeco:cuda and org.bytedeco:javacpp with classifier linux-x86_64", error);
        }
        String soname = SharedObjects.missingIn(error);
        String message;
        if (soname == null) {
            message = "cannot load " + library.title() + " (" + library.soname() + "): " + rootMessage(error)
                    + "; " + library.install() + ", and put its lib directory on LD_LIBRARY_PATH (" + path + ")";
        } else if (soname.startsWith("libcuda.so")) {
            message = "CUDA driver not found (" + soname + " is missing): install the NVIDIA driver (nvidia-smi must work),"
                    + " or in a container start it with the NVIDIA container toolkit (--gpus all); " + path;
        } else {
            CudaLibrary owner = library;
            for (CudaLibrary l : CudaLibrary.values()) {
                if (soname.startsWith(l.soname().substring(0, l.soname().indexOf(".so")))) {
                    owner = l;
                }
            }
            message = owner.title() + " not found (" + soname + " is missing, needed to use " + library.title()
                    + "): " + owner.install() + ", and put its lib directory on LD_LIBRARY_PATH (" + path + ")";
        }
        return new DeviceUnavailableException(message, error);
    }

    private static String rootMessage(Throwable error) {
        Throwable t = error;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
