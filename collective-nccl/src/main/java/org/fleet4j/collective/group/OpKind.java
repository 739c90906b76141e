package org.fleet4j.collective.group;

import java.util.Locale;

/** The collective or point-to-point operation a call performs. */
public enum OpKind {
    ALLREDUCE,
    BROADCAST,
    REDUCE,
    ALLGATHER,
    REDUCE_SCATTER,
    BARRIER,
    SEND_RECV;

    public String displayName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
