package org.fleet4j.core.blas;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * sgemm through OpenBLAS's {@code cblas_sgemm}, called with FFM downcalls on off-heap segments (no copies).
 *
 * <p>Downcalls are not {@code critical}: the thread-state transition costs tens of nanoseconds against
 * sgemm calls of microseconds to milliseconds, and a critical call would hold off every safepoint (and so
 * the garbage collector of all threads) for the whole multiplication.
 *
 * <p>OpenBLAS's thread count is process-wide: {@link #setThreads} affects every instance. Loading sets it to
 * 1, because a data-parallel job runs one rank per core and the executor decides when to use more.
 */
public final class OpenBlasGemm implements Gemm {

    /** Environment variable (or system property) naming the library file to load instead of searching. */
    public static final String LIBRARY_OVERRIDE = "FLEET_BLAS_LIBRARY";
    static final String SONAME = "libopenblas.so.0";

    private static final int CBLAS_ROW_MAJOR = 101;
    private static final int CBLAS_NO_TRANS = 111;
    private static final int CBLAS_TRANS = 112;

    private final String library;
    private final String version;
    private final MethodHandle sgemm;
    private final MethodHandle setNumThreads;
    private final MethodHandle getNumThreads;

    private OpenBlasGemm(String library, SymbolLookup lookup) {
        Linker linker = Linker.nativeLinker();
        this.library = library;
        this.sgemm = linker.downcallHandle(symbol(lookup, "cblas_sgemm"), FunctionDescriptor.ofVoid(
                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_FLOAT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_FLOAT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        this.setNumThreads = linker.downcallHandle(symbol(lookup, "openblas_set_num_threads"),
                FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT));
        this.getNumThreads = linker.downcallHandle(symbol(lookup, "openblas_get_num_threads"),
                FunctionDescriptor.of(ValueLayout.JAVA_INT));
        this.version = lookup.find("openblas_get_config")
                .map(s -> linker.downcallHandle(s, FunctionDescriptor.of(ValueLayout.ADDRESS)))
                .map(OpenBlasGemm::callConfig)
                .map(OpenBlasGemm::versionOf)
                .orElse("");
        setThreads(1);
    }

    /**
     * Loads OpenBLAS: the file named by {@value #LIBRARY_OVERRIDE} when set (an error if it cannot be loaded),
     * otherwise the first of {@value #SONAME} on the loader's search path, Debian's multiarch folders and
     * {@code System.mapLibraryName("openblas")}.
     *
     * @throws IllegalStateException naming every place tried and the package to install
     */
    public static OpenBlasGemm load() {
        return load(Blas.setting(LIBRARY_OVERRIDE));
    }

    /** Like {@link #load()}, but empty when no OpenBLAS is installed; a bad override is still an error. */
    public static Optional<OpenBlasGemm> tryLoad() {
        String override = Blas.setting(LIBRARY_OVERRIDE);
        if (override != null) {
            return Optional.of(load(override));
        }
        try {
            return Optional.of(load(null));
        } catch (IllegalStateException absent) {
            return Optional.empty();
        }
    }

    static OpenBlasGemm load(String overridePath) {
        if (overridePath != null) {
            Path path = Path.of(overridePath);
            if (!Files.isRegularFile(path)) {
                throw new IllegalStateException(LIBRARY_OVERRIDE + "=" + overridePath
                        + " does not name a file; point it at OpenBLAS's shared library (for example "
                        + "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0) or unset it");
            }
            try {
                return new OpenBlasGemm(path.getFileName().toString(), SymbolLookup.libraryLookup(path, Arena.global()));
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new IllegalStateException(LIBRARY_OVERRIDE + "=" + overridePath
                        + " could not be used as OpenBLAS: " + e.getMessage(), e);
            }
        }
        List<String> tried = new ArrayList<>();
        for (String candidate : candidates()) {
            tried.add(candidate);
            SymbolLookup lookup;
            try {
                lookup = candidate.contains("/")
                        ? SymbolLookup.libraryLookup(Path.of(candidate), Arena.global())
                        : SymbolLookup.libraryLookup(candidate, Arena.global());
            } catch (IllegalArgumentException notThere) {
                continue;
            }
            if (lookup.find("cblas_sgemm").isPresent() && lookup.find("openblas_set_num_threads").isPresent()) {
                return new OpenBlasGemm(Path.of(candidate).getFileName().toString(), lookup);
            }
        }
        throw new IllegalStateException("OpenBLAS not found (tried " + String.join(", ", tried)
                + "); install it (Debian/Ubuntu: apt-get install libopenblas0-pthread) or set "
                + LIBRARY_OVERRIDE + " to its shared library");
    }

    private static List<String> candidates() {
        String multiarch = switch (System.getProperty("os.arch")) {
            case "amd64", "x86_64" -> "x86_64-linux-gnu";
            case "aarch64" -> "aarch64-linux-gnu";
            default -> System.getProperty("os.arch") + "-linux-gnu";
        };
        return List.of(SONAME,
                "/usr/lib/" + multiarch + "/" + SONAME,
                "/usr/lib/" + multiarch + "/openblas-pthread/" + SONAME,
                System.mapLibraryName("openblas"));
    }

    private static MemorySegment symbol(SymbolLookup lookup, String name) {
        return lookup.find(name).orElseThrow(() -> new IllegalStateException(
                "the BLAS library has no symbol " + name + "; it is not OpenBLAS"));
    }

    private static String callConfig(MethodHandle getConfig) {
        try {
            MemorySegment text = (MemorySegment) getConfig.invokeExact();
            return text.reinterpret(4096).getString(0);
        } catch (Throwable t) {
            throw new IllegalStateException("openblas_get_config failed", t);
        }
    }

    /** "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64" gives "0.3.21". */
    static String versionOf(String config) {
        String[] words = config.trim().split("\\s+");
        return words.length >= 2 && words[0].equals("OpenBLAS") ? words[1] : "";
    }

    @Override
    public void sgemm(boolean transA, boolean transB, int m, int n, int k,
                      float alpha, MemorySegment a, long aOffsetElems, int lda,
                      MemorySegment b, long bOffsetElems, int ldb,
                      float beta, MemorySegment c, long cOffsetElems, int ldc) {
        GemmArguments.check(transA, transB, m, n, k, a, aOffsetElems, lda, b, bOffsetElems, ldb, c, cOffsetElems, ldc);
        if (m == 0 || n == 0) {
            return;
        }
        requireNative("A", a);
        requireNative("B", b);
        requireNative("C", c);
        if (beta == 0f) {
            // OpenBLAS first scales C by beta in a pass of its own (sgemm_beta) and then adds the product onto
            // it; zeroing C with the JDK's vectorised fill and adding onto that (beta 1) gives the same result
            // faster for the MLP's weight gradients (784 x 512 and 512 x 512, depth 64; docs/performance/blas.md).
            zero(c, cOffsetElems, m, n, ldc);
            beta = 1f;
        }
        try {
            sgemm.invokeExact(CBLAS_ROW_MAJOR, transA ? CBLAS_TRANS : CBLAS_NO_TRANS,
                    transB ? CBLAS_TRANS : CBLAS_NO_TRANS, m, n, k,
                    alpha, a.asSlice(aOffsetElems * Float.BYTES), lda,
                    b.asSlice(bOffsetElems * Float.BYTES), ldb,
                    beta, c.asSlice(cOffsetElems * Float.BYTES), ldc);
        } catch (Throwable t) {
            throw new IllegalStateException("cblas_sgemm failed", t);
        }
    }

    /** Zeroes C's m x n window (rows ldc apart), nothing outside it. */
    private static void zero(MemorySegment c, long offsetElems, int m, int n, int ldc) {
        if (ldc == n) {
            c.asSlice(offsetElems * Float.BYTES, (long) m * n * Float.BYTES).fill((byte) 0);
            return;
        }
        for (int i = 0; i < m; i++) {
            c.asSlice((offsetElems + (long) i * ldc) * Float.BYTES, (long) n * Float.BYTES).fill((byte) 0);
        }
    }

    private static void requireNative(String name, MemorySegment s) {
        if (!s.isNative()) {
            throw new IllegalArgumentException("OpenBLAS sgemm needs off-heap memory, but matrix " + name
                    + " is a heap segment; allocate it from an Arena (or use JavaGemm)");
        }
    }

    @Override
    public String name() {
        return version.isEmpty() ? "OpenBLAS" : "OpenBLAS " + version;
    }

    @Override
    public String description() {
        int t = threads();
        return "BLAS: " + name() + " (" + library + ", " + t + (t == 1 ? " thread)" : " threads)");
    }

    @Override
    public void setThreads(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("BLAS threads must be >= 1, got " + threads);
        }
        try {
            setNumThreads.invokeExact(threads);
        } catch (Throwable t) {
            throw new IllegalStateException("openblas_set_num_threads(" + threads + ") failed", t);
        }
    }

    @Override
    public int threads() {
        try {
            return (int) getNumThreads.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("openblas_get_num_threads failed", t);
        }
    }
}
