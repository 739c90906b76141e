package org.fleet4j.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * NVRTC called straight through the FFM API, for checking kernel sources on a machine without a GPU: libnvrtc needs
 * no driver, while JavaCPP's NVRTC binding (what {@link NvrtcCompiler} uses in production) links cudart and the
 * driver. Compiles with {@link NvrtcCompiler#options}, so a module that passes here passes there, as far as the two
 * NVRTC versions agree.
 */
final class NvrtcLibrary implements KernelCompiler {
    /** Where the CUDA toolkit, Debian's libnvrtc packages and the NVIDIA wheels put the library. */
    private static final List<String> DIRS = List.of("/usr/local/cuda/lib64", "/usr/local/cuda/lib",
            "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib");
    private static final int SUCCESS = 0;

    private final Path library;
    private final String identity;
    /** major * 10 + minor, e.g. 131 for 13.1. */
    private final int version;
    private final MethodHandle create;
    private final MethodHandle compile;
    private final MethodHandle destroy;
    private final MethodHandle logSize;
    private final MethodHandle log;
    private final MethodHandle cubinSize;
    private final MethodHandle cubin;
    private final MethodHandle errorString;

    private NvrtcLibrary(Path library) {
        this.library = library;
        Linker linker = Linker.nativeLinker();
        // global arena: the library stays loaded for the JVM's life, as the handles below need
        SymbolLookup lib = SymbolLookup.libraryLookup(library, Arena.global());
        ValueLayout.OfInt i32 = ValueLayout.JAVA_INT;
        var ptr = ValueLayout.ADDRESS;
        create = handle(linker, lib, "nvrtcCreateProgram", FunctionDescriptor.of(i32, ptr, ptr, ptr, i32, ptr, ptr));
        compile = handle(linker, lib, "nvrtcCompileProgram", FunctionDescriptor.of(i32, ptr, i32, ptr));
        destroy = handle(linker, lib, "nvrtcDestroyProgram", FunctionDescriptor.of(i32, ptr));
        logSize = handle(linker, lib, "nvrtcGetProgramLogSize", FunctionDescriptor.of(i32, ptr, ptr));
        log = handle(linker, lib, "nvrtcGetProgramLog", FunctionDescriptor.of(i32, ptr, ptr));
        cubinSize = handle(linker, lib, "nvrtcGetCUBINSize", FunctionDescriptor.of(i32, ptr, ptr));
        cubin = handle(linker, lib, "nvrtcGetCUBIN", FunctionDescriptor.of(i32, ptr, ptr));
        errorString = handle(linker, lib, "nvrtcGetErrorString", FunctionDescriptor.of(ptr, i32));
        MethodHandle versionCall = handle(linker, lib, "nvrtcVersion", FunctionDescriptor.of(i32, ptr, ptr));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment major = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment minor = arena.allocate(ValueLayout.JAVA_INT);
            check((int) versionCall.invokeExact(major, minor), "nvrtcVersion", "");
            version = major.get(ValueLayout.JAVA_INT, 0) * 10 + minor.get(ValueLayout.JAVA_INT, 0);
            identity = "nvrtc " + major.get(ValueLayout.JAVA_INT, 0) + "." + minor.get(ValueLayout.JAVA_INT, 0)
                    + " (" + library + ")";
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * The newest libnvrtc.so.N of the first directory holding one: $LD_LIBRARY_PATH's (where scripts/gpu-check.sh puts
     * the CUDA 13 wheels), $CUDA_HOME's, then the usual ones; null when there is none.
     */
    static NvrtcLibrary find() {
        List<String> dirs = new ArrayList<>();
        for (String d : System.getenv().getOrDefault("LD_LIBRARY_PATH", "").split(":")) {
            if (!d.isEmpty()) {
                dirs.add(d);
            }
        }
        String home = System.getenv("CUDA_HOME");
        if (home != null) {
            dirs.add(home + "/lib64");
            dirs.add(home + "/lib");
        }
        dirs.addAll(DIRS);
        for (String dir : dirs) {
            Path d = Path.of(dir);
            if (!Files.isDirectory(d)) {
                continue;
            }
            try (Stream<Path> files = Files.list(d)) {
                Path best = files.filter(p -> p.getFileName().toString().matches("libnvrtc\\.so\\.\\d+(\\.\\d+)?"))
                        .max((a, b) -> compareVersions(a.getFileName().toString(), b.getFileName().toString()))
                        .orElse(null);
                if (best != null) {
                    return new NvrtcLibrary(best);
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("listing " + d, e);
            }
        }
        return null;
    }

    private static int compareVersions(String a, String b) {
        String[] x = a.substring("libnvrtc.so.".length()).split("\\.");
        String[] y = b.substring("libnvrtc.so.".length()).split("\\.");
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            int c = Integer.compare(i < x.length ? Integer.parseInt(x[i]) : 0, i < y.length ? Integer.parseInt(y[i]) : 0);
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    /** Whether this NVRTC is at least {@code major.minor}. */
    boolean atLeast(int major, int minor) {
        return version >= major * 10 + minor;
    }

    @Override
    public byte[] compileToCubin(String moduleName, String source, String arch) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment programRef = arena.allocate(ValueLayout.ADDRESS);
            check((int) create.invokeExact(programRef, arena.allocateFrom(source), arena.allocateFrom(moduleName + ".cu"),
                    0, MemorySegment.NULL, MemorySegment.NULL), "nvrtcCreateProgram", moduleName);
            MemorySegment program = programRef.get(ValueLayout.ADDRESS, 0);
            try {
                List<String> options = NvrtcCompiler.options(arch);
                MemorySegment opts = arena.allocate(ValueLayout.ADDRESS, options.size());
                for (int i = 0; i < options.size(); i++) {
                    opts.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(options.get(i)));
                }
                int status = (int) compile.invokeExact(program, options.size(), opts);
                if (status != SUCCESS) {
                    throw new CudaException(identity + " could not compile kernel module " + moduleName + " for " + arch
                            + " with " + options + ": " + errorName(status) + "\n" + log(arena, program));
                }
                MemorySegment size = arena.allocate(ValueLayout.JAVA_LONG);
                check((int) cubinSize.invokeExact(program, size), "nvrtcGetCUBINSize", moduleName);
                MemorySegment bytes = arena.allocate(size.get(ValueLayout.JAVA_LONG, 0));
                check((int) cubin.invokeExact(program, bytes), "nvrtcGetCUBIN", moduleName);
                return bytes.toArray(ValueLayout.JAVA_BYTE);
            } finally {
                int ignored = (int) destroy.invokeExact(programRef);
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private String log(Arena arena, MemorySegment program) throws Throwable {
        MemorySegment size = arena.allocate(ValueLayout.JAVA_LONG);
        check((int) logSize.invokeExact(program, size), "nvrtcGetProgramLogSize", "");
        MemorySegment text = arena.allocate(Math.max(1, size.get(ValueLayout.JAVA_LONG, 0)));
        check((int) log.invokeExact(program, text), "nvrtcGetProgramLog", "");
        return text.getString(0, StandardCharsets.UTF_8);
    }

    private String errorName(int status) throws Throwable {
        MemorySegment s = (MemorySegment) errorString.invokeExact(status);
        return s.reinterpret(256).getString(0);
    }

    private void check(int status, String call, String module) throws Throwable {
        if (status != SUCCESS) {
            throw new CudaException(call + (module.isEmpty() ? "" : " for kernel module " + module) + " failed in "
                    + library + ": " + errorName(status));
        }
    }

    private static MethodHandle handle(Linker linker, SymbolLookup lib, String name, FunctionDescriptor fd) {
        return linker.downcallHandle(lib.findOrThrow(name), fd);
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    @Override
    public String identity() {
        return identity;
    }
}
