package org.fleet4j.pserver.grpcpp;

import org.fleet4j.pserver.table.KeyHash;

/**
 * Which of a server's network threads owns what (sharing-nothing): a sparse id by {@link KeyHash#threadOf} (whole
 * stripes per thread when the count is a power of two), a dense block by its name and number. Workers route each
 * request to the owning thread's connection; a thread refuses what it does not own.
 */
final class Ownership {
    private Ownership() {
    }

    static int ofId(long id, int threads) {
        return threads == 1 ? 0 : KeyHash.threadOf(id, threads);
    }

    static int ofBlock(String param, int block, int threads) {
        return Math.floorMod(param.hashCode() * 31 + block, threads);
    }

    /** Sync mode's thread for a sparse table's pushes: the step is counted and averaged in one place. */
    static int ofTable(String table, int threads) {
        return Math.floorMod(table.hashCode(), threads);
    }
}
