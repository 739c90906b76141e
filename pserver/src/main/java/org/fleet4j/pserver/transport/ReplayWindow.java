package org.fleet4j.pserver.transport;

import java.util.BitSet;

/**
 * The sequence numbers of one session that a server has accepted: each is accepted once. Calls may arrive a little
 * out of order (one connection carries many at once), so the last {@link #SIZE} below the highest are remembered one
 * by one; anything older is refused.
 */
public final class ReplayWindow {
    public static final int SIZE = 4096;

    private final BitSet seen = new BitSet(SIZE);
    private long highest = -1;

    /** True the first time {@code sequence} comes, false for a repeat or one too old to tell. */
    public synchronized boolean accept(long sequence) {
        if (sequence < 0) {
            return false;
        }
        if (sequence > highest) {
            if (sequence - highest >= SIZE) {
                seen.clear();
            } else {
                for (long s = highest + 1; s < sequence; s++) {
                    seen.clear(slot(s));
                }
            }
            highest = sequence;
            seen.set(slot(sequence));
            return true;
        }
        if (highest - sequence >= SIZE || seen.get(slot(sequence))) {
            return false;
        }
        seen.set(slot(sequence));
        return true;
    }

    private static int slot(long sequence) {
        return (int) (sequence % SIZE);
    }
}
