package org.fleet4j.examples;

/**
 * How a Criteo row becomes model input, shared by the {@code ctr} model and the planted model of {@code ctr_data}
 * (which uses the same dense transform, so the best model is one the network can express).
 */
final class CtrFeatures {
    private CtrFeatures() {
    }

    /** An integer feature on a log scale, sign kept (Criteo's I2 goes negative); a missing one is 0. */
    static float dense(long x, boolean missing) {
        return missing ? 0f : (float) (Math.signum(x) * Math.log1p(Math.abs((double) x)));
    }

    /** The vocabulary of a parameter server's sparse table: the raw 64-bit ids, with no hashing. */
    static final long RAW_IDS = 0;
    /** The id a missing value gets in a sparse table: no Criteo id (32 bits of hexadecimal) can be it. */
    static final long MISSING_ID = Long.MIN_VALUE;

    /**
     * The row of a slot's local table [vocab, dim] for a categorical id: row 0 for a missing value, otherwise the
     * id hashed into 1..vocab-1, as users without a parameter server fold open-ended ids into a fixed table. A
     * parameter server's sparse table takes the 64-bit id itself ({@code vocab} = {@link #RAW_IDS}; missing values get
     * {@link #MISSING_ID}).
     */
    static long localRow(long id, boolean missing, long vocab) {
        if (vocab == RAW_IDS) {
            return missing ? MISSING_ID : id;
        }
        return missing ? 0 : 1 + Long.remainderUnsigned(mix(id), vocab - 1);
    }

    /** The 64-bit finaliser of MurmurHash3: neighbouring ids land on unrelated rows. */
    static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }
}
