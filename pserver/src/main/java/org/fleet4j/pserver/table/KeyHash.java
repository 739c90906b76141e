package org.fleet4j.pserver.table;

/**
 * Where a sparse id lives: a mixing hash (MurmurHash3's 64-bit finaliser) spreads sequential, strided and
 * clustered ids evenly, where raw {@code id % servers} puts every id of stride {@code servers} on one server.
 * The server is taken from the hash's high bits, the owner, stripe and slot inside a server from a second, salted
 * hash, so the choices do not correlate. Every placement inside a server is a function of the owner count alone, so
 * a worker that knows a server's owners (grpc++'s network threads) routes by exactly the table's ownership.
 */
public final class KeyHash {
    private static final long SALT = 0x9E3779B97F4A7C15L;

    private KeyHash() {
    }

    /** MurmurHash3's fmix64: every input bit flips about half the output bits. */
    public static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        x *= 0xc4ceb9fe1a85ec53L;
        x ^= x >>> 33;
        return x;
    }

    /** The server in [0, servers) that holds {@code id}. */
    public static int serverOf(long id, int servers) {
        return (int) Math.unsignedMultiplyHigh(mix(id), servers);
    }

    /**
     * The owner in [0, owners) of {@code id} on its server: the one thread of {@link ShardOwners} that alone touches
     * its row, and so the grpc++ network thread a worker sends it to. It is the high bits of the same hash that
     * picks the row's stripe, and {@link SparseTable} makes its stripe count a multiple of the owners, so every
     * stripe lies in exactly one owner for any number of owners.
     */
    public static int threadOf(long id, int owners) {
        return (int) Math.unsignedMultiplyHigh(local(id), owners);
    }

    /** The owner in [0, owners) of block {@code block} of dense table {@code param} on its server. */
    public static int ownerOfBlock(String param, int block, int owners) {
        return Math.floorMod(param.hashCode() * 31 + block, owners);
    }

    /** The owner in [0, owners) that sums a sync-mode step's pushes of sparse table {@code table}. */
    public static int ownerOfSteps(String table, int owners) {
        return Math.floorMod(table.hashCode(), owners);
    }

    /** The hash a server uses to place {@code id} in its stripes and slots; independent of {@link #serverOf}. */
    static long local(long id) {
        return mix(id ^ SALT);
    }
}
