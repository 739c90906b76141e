package org.fleet4j.collective.group;

import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ReduceOp;

/**
 * What one rank asked for in one call: kind, dtype, element count, reduce op and root. Its two-word fingerprint
 * travels with the data so that ranks that issued different calls fail with a readable error instead of mixing
 * bytes of different operations.
 *
 * @param count elements per rank (for allgather and reduce-scatter: the per-rank share)
 * @param seq   position of this call among the group's collectives (or among one peer pair's point-to-point calls)
 */
public record OpCall(OpKind kind, DataType dtype, ReduceOp op, int root, long count, long seq) {

    public long fingerprintHigh() {
        return ((long) kind.ordinal() << 56) | ((long) dtype.ordinal() << 48) | ((long) (op == null ? 0xFF : op.ordinal()) << 40)
                | ((root + 1L) & 0xFF_FFFF_FFFFL);
    }

    public long fingerprintLow() {
        return count;
    }

    public boolean matches(long high, long low) {
        return high == fingerprintHigh() && low == fingerprintLow();
    }

    /** Rebuilds the call a peer described with its fingerprint, for error messages. */
    public static String describe(long high, long low, long seq) {
        int kind = (int) (high >>> 56) & 0xFF;
        int dtype = (int) (high >>> 48) & 0xFF;
        int op = (int) (high >>> 40) & 0xFF;
        long root = (high & 0xFF_FFFF_FFFFL) - 1;
        if (kind >= OpKind.values().length || dtype >= DataType.values().length
                || (op != 0xFF && op >= ReduceOp.values().length)) {
            return "an unrecognised call (fingerprint " + Long.toHexString(high) + ":" + low + ")";
        }
        return new OpCall(OpKind.values()[kind], DataType.values()[dtype], op == 0xFF ? null : ReduceOp.values()[op],
                (int) root, low, seq).toString();
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder(kind.displayName()).append(" #").append(seq).append(" (")
                .append(dtype.displayName()).append(" x ").append(count);
        if (op != null) {
            s.append(", ").append(op.displayName());
        }
        if (root >= 0) {
            s.append(", root ").append(root);
        }
        return s.append(')').toString();
    }
}
