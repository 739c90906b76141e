package org.fleet4j.pserver.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What a row keeps for eviction ({@link RowEviction}), after its optimizer record: {@code show} and {@code click}
 * (float32, decayed by each shrink), {@code unseen} (shrinks since its last update, as Paddle's unseen days) and
 * {@code last_step} (the table's step at its last update or its creation; int32, so steps count to 2^31). 16 bytes,
 * or none when the table's eviction needs none of them (L2 eviction reads the value itself).
 */
record RowStats(boolean kept) {
    static final RowStats NONE = new RowStats(false);
    static final RowStats KEPT = new RowStats(true);
    /** The names of the columns a checkpoint writes, in order. */
    static final String SHOW = "show";
    static final String CLICK = "click";
    static final String UNSEEN = "unseen_days";
    static final String LAST_STEP = "last_step";

    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED;
    private static final long SHOW_AT = 0;
    private static final long CLICK_AT = 4;
    private static final long UNSEEN_AT = 8;
    private static final long STEP_AT = 12;

    static RowStats of(RowEviction eviction) {
        return eviction.keepsRowStats() ? KEPT : NONE;
    }

    long bytes() {
        return kept ? 16 : 0;
    }

    int floats() {
        return kept ? 4 : 0;
    }

    void init(MemorySegment row, long at, long step) {
        if (kept) {
            row.set(F, at + SHOW_AT, 0f);
            row.set(F, at + CLICK_AT, 0f);
            row.set(I, at + UNSEEN_AT, 0);
            row.set(I, at + STEP_AT, (int) step);
        }
    }

    void addShow(MemorySegment row, long at) {
        row.set(F, at + SHOW_AT, row.get(F, at + SHOW_AT) + 1f);
    }

    void update(MemorySegment row, long at, long step) {
        row.set(I, at + UNSEEN_AT, 0);
        row.set(I, at + STEP_AT, (int) step);
    }

    void decay(MemorySegment row, long at, double rate) {
        row.set(F, at + SHOW_AT, (float) (row.get(F, at + SHOW_AT) * rate));
        row.set(F, at + CLICK_AT, (float) (row.get(F, at + CLICK_AT) * rate));
    }

    /** Counts one more shrink without an update and returns how many there have been. */
    int passUnseen(MemorySegment row, long at) {
        int unseen = row.get(I, at + UNSEEN_AT) + 1;
        row.set(I, at + UNSEEN_AT, unseen);
        return unseen;
    }

    float show(MemorySegment row, long at) {
        return row.get(F, at + SHOW_AT);
    }

    float click(MemorySegment row, long at) {
        return row.get(F, at + CLICK_AT);
    }

    long lastStep(MemorySegment row, long at) {
        return row.get(I, at + STEP_AT);
    }
}
