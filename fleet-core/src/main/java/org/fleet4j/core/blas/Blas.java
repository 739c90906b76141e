package org.fleet4j.core.blas;

import java.util.Locale;

/**
 * Chooses the process's {@link Gemm}: OpenBLAS when it can be loaded, else the pure-Java {@link JavaGemm}.
 * {@value #CHOICE} ({@code java} or {@code openblas}, as a system property or environment variable) forces
 * one; forcing OpenBLAS when it is absent is an error that says what to install.
 */
public final class Blas {

    public static final String CHOICE = "FLEET_BLAS";

    private Blas() {
    }

    private static volatile Gemm chosen;

    /**
     * The process-wide implementation, chosen on first use.
     *
     * @throws IllegalArgumentException when {@value #CHOICE} has a value other than java or openblas
     * @throws IllegalStateException when {@value #CHOICE}=openblas and OpenBLAS cannot be loaded
     */
    public static Gemm get() {
        Gemm g = chosen;
        if (g == null) {
            synchronized (Blas.class) {
                if (chosen == null) {
                    chosen = select(setting(CHOICE));
                }
                g = chosen;
            }
        }
        return g;
    }

    /** The start-up line, for example {@code BLAS: OpenBLAS 0.3.21 (libopenblas.so.0, 1 thread)}. */
    public static String description() {
        return get().description();
    }

    /** Picks an implementation for a {@value #CHOICE} value; null or blank means the fastest available. */
    static Gemm select(String choice) {
        String normalised = choice == null ? "" : choice.trim().toLowerCase(Locale.ROOT);
        return switch (normalised) {
            case "" -> OpenBlasGemm.tryLoad().<Gemm>map(g -> g).orElseGet(Blas::javaGemm);
            case "java" -> javaGemm();
            case "openblas" -> {
                try {
                    yield OpenBlasGemm.load();
                } catch (IllegalStateException e) {
                    throw new IllegalStateException(CHOICE + "=openblas but " + e.getMessage(), e);
                }
            }
            default -> throw new IllegalArgumentException(CHOICE + "=" + choice
                    + " is not a BLAS choice; use 'java' or 'openblas' (or leave it unset to pick the fastest)");
        };
    }

    /**
     * The pure-Java GEMM. Its class is touched only here, so a JVM started without the Vector API still runs
     * with OpenBLAS, and one that needs the fallback gets told how to start.
     */
    private static Gemm javaGemm() {
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            throw new IllegalStateException("OpenBLAS is not available and the pure-Java GEMM needs the Vector API: "
                    + "start the JVM with --add-modules=jdk.incubator.vector (bin/fleetrun does) or install OpenBLAS "
                    + "(Debian: apt-get install libopenblas0-pthread)");
        }
        return new JavaGemm();
    }

    /** A setting from the system property of that name, else the environment variable; null when neither. */
    static String setting(String name) {
        String value = System.getProperty(name);
        if (value == null || value.isBlank()) {
            value = System.getenv(name);
        }
        return value == null || value.isBlank() ? null : value;
    }
}
