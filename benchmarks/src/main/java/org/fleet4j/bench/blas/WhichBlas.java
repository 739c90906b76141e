package org.fleet4j.bench.blas;

import org.fleet4j.core.blas.Blas;

/** Prints the BLAS start-up line (which GEMM this machine would use, and its threads), for scripts and people. */
public final class WhichBlas {
    private WhichBlas() {
    }

    public static void main(String[] args) {
        try {
            System.out.println(Blas.description());
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("WhichBlas: " + e.getMessage());
            System.exit(2);
        }
    }
}
