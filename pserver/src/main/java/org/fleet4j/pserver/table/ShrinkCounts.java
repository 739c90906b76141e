package org.fleet4j.pserver.table;

/**
 * What a shrink ({@link RowEviction}) did to a table, or to one stripe of it: rows before, rows evicted by each rule (a
 * row condemned by several counts under the first of age, L2 norm, score), and the off-heap bytes held before and
 * after.
 */
public record ShrinkCounts(long rowsBefore, long byAge, long byL2, long byScore, long bytesBefore, long bytesAfter) {
    public static final ShrinkCounts NONE = new ShrinkCounts(0, 0, 0, 0, 0, 0);

    public long evicted() {
        return byAge + byL2 + byScore;
    }

    public long freedBytes() {
        return bytesBefore - bytesAfter;
    }

    public ShrinkCounts plus(ShrinkCounts o) {
        return new ShrinkCounts(rowsBefore + o.rowsBefore, byAge + o.byAge, byL2 + o.byL2, byScore + o.byScore,
                bytesBefore + o.bytesBefore, bytesAfter + o.bytesAfter);
    }
}
