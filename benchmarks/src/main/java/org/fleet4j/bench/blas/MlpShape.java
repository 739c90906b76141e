package org.fleet4j.bench.blas;

import java.util.Arrays;

/**
 * The matrix products of a fully-connected layer (in x out) at batch B: forward Y[B,out] = X[B,in] W[in,out],
 * backward dX[B,in] = dY[B,out] W^T and dW[in,out] = X^T dY.
 */
record MlpShape(String name, boolean transA, boolean transB, int m, int n, int k) {

    static final int BATCH = 64;
    private static final int[][] LAYERS = {{784, 512}, {512, 512}, {512, 10}};

    static MlpShape named(String name) {
        String[] parts = name.split("\\.");
        int layer = parts.length == 2 && parts[0].matches("fc[123]") ? parts[0].charAt(2) - '1' : -1;
        if (layer < 0) {
            throw new IllegalArgumentException("shape '" + name + "' is not fc1..fc3 followed by .fwd, .dX or .dW");
        }
        int in = LAYERS[layer][0];
        int out = LAYERS[layer][1];
        return switch (parts[1]) {
            case "fwd" -> new MlpShape(name, false, false, BATCH, out, in);
            case "dX" -> new MlpShape(name, false, true, BATCH, in, out);
            case "dW" -> new MlpShape(name, true, false, in, out, BATCH);
            default -> throw new IllegalArgumentException("shape '" + name + "': the product must be fwd, dX or dW, not "
                    + Arrays.toString(parts));
        };
    }

    int lda() {
        return transA ? m : k;
    }

    int ldb() {
        return transB ? k : n;
    }

    double flops() {
        return 2.0 * m * n * k;
    }

    String product() {
        return (transA ? "A^T" : "A") + (transB ? " B^T" : " B") + " (" + m + "x" + k + " * " + k + "x" + n + ")";
    }
}
