package org.fleet4j.collective;

import java.util.Locale;
import org.fleet4j.text.Quoted;

/** How allreduce, reduce and reduce-scatter combine the ranks' values. AVG is a sum divided by the group size. */
public enum ReduceOp {
    SUM,
    AVG,
    MAX,
    MIN,
    PROD;

    public String displayName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static ReduceOp parse(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown reduce op " + Quoted.of(name) + "; expected one of sum, avg, max, min, prod");
        }
    }
}
