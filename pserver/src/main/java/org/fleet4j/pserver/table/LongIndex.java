package org.fleet4j.pserver.table;

/**
 * An open-addressing map from a 64-bit id to a small int, sized for a known number of keys: the worker's dedup of one
 * batch's ids without boxing them, and a sync server's merge of a step's pushes.
 */
public final class LongIndex {
    private final long[] keys;
    private final int[] values;
    private final boolean[] used;
    private final int mask;

    public LongIndex(int expected) {
        int capacity = Integer.highestOneBit(Math.max(2, expected * 2 - 1)) << 1;
        keys = new long[capacity];
        values = new int[capacity];
        used = new boolean[capacity];
        mask = capacity - 1;
    }

    /** The value of {@code key} if present; otherwise stores {@code value} and returns -1. */
    public int putIfAbsent(long key, int value) {
        int slot = (int) KeyHash.mix(key) & mask;
        while (used[slot]) {
            if (keys[slot] == key) {
                return values[slot];
            }
            slot = (slot + 1) & mask;
        }
        used[slot] = true;
        keys[slot] = key;
        values[slot] = value;
        return -1;
    }
}
