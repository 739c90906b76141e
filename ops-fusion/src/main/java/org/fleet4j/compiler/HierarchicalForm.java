package org.fleet4j.compiler;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;
import org.fleet4j.text.Quoted;

/**
 * Which stages hierarchical allreduce splits a bucket into. {@link #REDUCE}: reduce to the first rank of the node,
 * allreduce among those first ranks, broadcast inside the node. {@link #RSAG}: reduce-scatter inside the node (each
 * local rank gets 1/L of the bucket), allreduce of each shard among the ranks with the same local index (the cross
 * rings, L of them, side by side), allgather inside the node. {@link #AUTO} picks one per bucket
 * ({@link #forBucket}). Paddle's strategy has no field for this, so it is chosen by the environment variable
 * {@link #ENV}, which Fleet reads once.
 */
public enum HierarchicalForm {
    AUTO, REDUCE, RSAG;

    public static final String ENV = "FLEET_HIERARCHICAL_FORM";

    /**
     * Under {@link #AUTO}, buckets of at least this many bytes take the reduce-scatter/allgather form
     * (docs/performance/compiler.md, "Which hierarchical form").
     */
    public static final long RSAG_MIN_BYTES = 256L << 10;

    /** The form named by {@code value} (of {@link #ENV}); unset or blank is {@link #AUTO}. */
    public static HierarchicalForm parse(String value) {
        if (value == null || value.isBlank()) {
            return AUTO;
        }
        for (HierarchicalForm f : values()) {
            if (f.key().equals(value.trim().toLowerCase(Locale.ROOT))) {
                return f;
            }
        }
        throw new IllegalArgumentException("environment variable " + ENV + "=" + Quoted.of(value) + " is not a hierarchical"
                + " allreduce form; allowed: " + Arrays.stream(values()).map(HierarchicalForm::key)
                .collect(Collectors.joining(", ")) + " (unset means auto)");
    }

    /** The lower-case name, as {@link #ENV} spells it. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The form a bucket of {@code bytes} gets: this one, or under {@link #AUTO} reduce-scatter/allgather from
     * {@link #RSAG_MIN_BYTES} and reduce below. Measured on two hosts of two ranks with a shaped link on a quiet
     * machine: from 256 KB the reduce-scatter form was as fast as the reduce form (1 Gbit/s, where the link decides)
     * or 1.13-1.46x faster (10 Gbit/s, where the CPU work inside a host decides: the L ranks of a node share the
     * reduction and the intra-node stages move 1/L of the bucket each); at 64 KB they tied, and at 16 KB the reduce
     * form's fewer, larger messages were 1.19x faster.
     */
    public HierarchicalForm forBucket(long bytes) {
        if (this != AUTO) {
            return this;
        }
        return bytes >= RSAG_MIN_BYTES ? RSAG : REDUCE;
    }
}
