package org.fleet4j.gpu;

import java.util.EnumMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bytedeco.javacpp.Loader;
import org.fleet4j.core.device.DeviceUnavailableException;

/**
 * Links the CUDA bindings on first use and turns the JVM's link errors into messages that name the missing shared
 * object and what to install. The outcome is remembered: a library that failed to load fails the same way again
 * instead of with the JVM's bare "Could not initialize class".
 */
public final class CudaLoader {
    private static final Pattern MISSING = Pattern.compile("(lib[\\w.+-]+\\.so[.\\d]*): cannot open shared object file");
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
        String soname = missingLibrary(error);
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

    /** The shared object named by the deepest "cannot open shared object file" in the chain, or null. */
    static String missingLibrary(Throwable error) {
        String found = null;
        for (Throwable t = error; t != null; t = t.getCause()) {
            Matcher m = MISSING.matcher(String.valueOf(t.getMessage()));
            if (m.find()) {
                found = m.group(1);
            }
            for (Throwable s : t.getSuppressed()) {
                Matcher ms = MISSING.matcher(String.valueOf(s.getMessage()));
                if (found == null && ms.find()) {
                    found = ms.group(1);
                }
            }
        }
        return found;
    }

    private static String rootMessage(Throwable error) {
        Throwable t = error;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
