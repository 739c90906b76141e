package org.fleet4j.compiler;

import java.util.List;

/** One group of gradients reduced by one collective: their names in production order, bytes, and ring. */
public record GradientBucket(int index, List<String> grads, long bytes, int ringId) {
    public GradientBucket {
        grads = List.copyOf(grads);
    }
}
