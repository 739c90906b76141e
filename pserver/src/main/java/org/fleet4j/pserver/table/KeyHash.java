package org.fleet4j.pserver.table;

/**
 * Where a sparse id lives: a mixing hash (MurmurHash3's 64-bit finaliser) spreads sequential, strided and
 * clustered ids evenly, where raw {@code id % servers} puts every id of stride {@code servers} on one server.
 * The server is taken from the hash's high bits, the stripe and slot inside a server from a second, salted hash,
 * so the three choices do not correlate.
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
     * The network thread in [0, threads) of a server that owns {@code id} (grpc++'s sharing-nothing split). It is
     * the high bits of the hash that picks a sparse table's stripe, so with a power-of-two number of threads that
     * divides the stripes each stripe belongs to exactly one thread, and no two threads touch one stripe.
     */
    public static int threadOf(long id, int threads) {
        return (int) Math.unsignedMultiplyHigh(local(id), threads);
    }

    /** The hash a server uses to place {@code id} in its stripes and slots; independent of {@link #serverOf}. */
    static long local(long id) {
        return mix(id ^ SALT);
    }
}
