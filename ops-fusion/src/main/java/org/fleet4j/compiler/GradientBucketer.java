package org.fleet4j.compiler;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits gradients, in the order backward produces them, into buckets: each closes before it would pass
 * {@code maxBytes} or hold more than {@code maxCount} gradients; the last bucket (the gradients backward produces
 * last, whose allreduce cannot overlap anything) is cut to {@code lastBytes} so it finishes soon after backward.
 * A gradient bigger than a cap gets a bucket of its own. Buckets go to rings 0..rings-1 round-robin.
 */
public record GradientBucketer(long maxBytes, int maxCount, long lastBytes, int rings) {
    public GradientBucketer {
        if (maxBytes < 1 || maxCount < 1 || lastBytes < 1 || rings < 1) {
            throw new IllegalArgumentException("bucket limits must be positive: maxBytes " + maxBytes + ", maxCount "
                    + maxCount + ", lastBytes " + lastBytes + ", rings " + rings);
        }
    }

    public List<GradientBucket> split(List<String> grads, List<Long> bytes) {
        int n = grads.size();
        int lastStart = n;
        long lastSize = 0;
        while (lastStart > 0 && (lastStart == n || lastSize + bytes.get(lastStart - 1) <= lastBytes)
                && n - lastStart < maxCount) {
            lastStart--;
            lastSize += bytes.get(lastStart);
        }
        List<List<Integer>> groups = new ArrayList<>();
        List<Integer> current = new ArrayList<>();
        long size = 0;
        for (int i = 0; i < lastStart; i++) {
            if (!current.isEmpty() && (size + bytes.get(i) > maxBytes || current.size() >= maxCount)) {
                groups.add(current);
                current = new ArrayList<>();
                size = 0;
            }
            current.add(i);
            size += bytes.get(i);
        }
        if (!current.isEmpty()) {
            groups.add(current);
        }
        List<Integer> last = new ArrayList<>();
        for (int i = lastStart; i < n; i++) {
            last.add(i);
        }
        if (!last.isEmpty()) {
            groups.add(last);
        }
        List<GradientBucket> buckets = new ArrayList<>();
        for (List<Integer> g : groups) {
            int index = buckets.size();
            buckets.add(new GradientBucket(index, g.stream().map(grads::get).toList(),
                    g.stream().mapToLong(bytes::get).sum(), index % rings));
        }
        return buckets;
    }
}
