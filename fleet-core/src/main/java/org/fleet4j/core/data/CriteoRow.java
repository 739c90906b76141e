package org.fleet4j.core.data;

import org.fleet4j.text.Quoted;

/**
 * One line of the Criteo display-advertising format, parsed into reusable arrays: a 0/1 label, 13 integer
 * features and 26 categorical features written as hexadecimal ids (up to 16 digits), separated by tabs. Any
 * feature may be empty (missing); the label may not. One instance is refilled line after line, so streaming a
 * file allocates nothing per line.
 */
public final class CriteoRow {
    public static final int DENSE = 13;
    public static final int SPARSE = 26;
    public static final int FIELDS = 1 + DENSE + SPARSE;

    private int label;
    private final long[] dense = new long[DENSE];
    private final boolean[] denseMissing = new boolean[DENSE];
    private final long[] sparse = new long[SPARSE];
    private final boolean[] sparseMissing = new boolean[SPARSE];

    public int label() {
        return label;
    }

    /** Integer feature {@code i} (0..12); 0 when {@link #denseMissing}. */
    public long dense(int i) {
        return dense[i];
    }

    public boolean denseMissing(int i) {
        return denseMissing[i];
    }

    /** Categorical feature {@code i} (0..25) as the 64-bit value of its hexadecimal id; 0 when {@link #sparseMissing}. */
    public long sparse(int i) {
        return sparse[i];
    }

    public boolean sparseMissing(int i) {
        return sparseMissing[i];
    }

    /**
     * Fills this row from one line (without its line terminator).
     *
     * @return null when the line is well-formed, else what is wrong with it (the row is then unspecified)
     */
    public String parse(CharSequence line) {
        int n = line.length();
        int field = 0;
        int start = 0;
        for (int i = 0; i <= n; i++) {
            if (i < n && line.charAt(i) != '\t') {
                continue;
            }
            if (field == FIELDS) {
                return "has more than " + FIELDS + " tab-separated fields (label, " + DENSE + " integers, " + SPARSE
                        + " hexadecimal categories)";
            }
            String problem = field(line, field, start, i);
            if (problem != null) {
                return problem;
            }
            field++;
            start = i + 1;
        }
        if (field < FIELDS) {
            return "has " + field + " tab-separated fields, expected " + FIELDS + " (label, " + DENSE + " integers, "
                    + SPARSE + " hexadecimal categories; empty fields are allowed, missing tabs are not)";
        }
        return null;
    }

    private String field(CharSequence line, int field, int from, int to) {
        if (field == 0) {
            if (to - from == 1 && (line.charAt(from) == '0' || line.charAt(from) == '1')) {
                label = line.charAt(from) - '0';
                return null;
            }
            return "label " + Quoted.of(line.subSequence(from, to)) + " is not 0 or 1";
        }
        if (field <= DENSE) {
            int i = field - 1;
            denseMissing[i] = from == to;
            dense[i] = from == to ? 0 : parseDecimal(line, from, to);
            if (dense[i] == Long.MIN_VALUE) {
                return "integer feature I" + field + " " + Quoted.of(line.subSequence(from, to)) + " is not a decimal integer";
            }
            return null;
        }
        int i = field - 1 - DENSE;
        sparseMissing[i] = from == to;
        if (from == to) {
            sparse[i] = 0;
            return null;
        }
        if (to - from > 16) {
            return "categorical feature C" + (i + 1) + " " + Quoted.of(line.subSequence(from, to)) + " has more than 16 hexadecimal digits";
        }
        long v = 0;
        for (int k = from; k < to; k++) {
            int d = Character.digit(line.charAt(k), 16);
            if (d < 0) {
                return "categorical feature C" + (i + 1) + " " + Quoted.of(line.subSequence(from, to)) + " is not hexadecimal";
            }
            v = (v << 4) | d;
        }
        sparse[i] = v;
        return null;
    }

    /** A signed decimal that fits in a long, or Long.MIN_VALUE for anything else (which no feature holds). */
    private static long parseDecimal(CharSequence s, int from, int to) {
        boolean negative = s.charAt(from) == '-';
        int k = negative || s.charAt(from) == '+' ? from + 1 : from;
        if (k == to || to - k > 18) {
            return Long.MIN_VALUE;
        }
        long v = 0;
        for (; k < to; k++) {
            char c = s.charAt(k);
            if (c < '0' || c > '9') {
                return Long.MIN_VALUE;
            }
            v = v * 10 + (c - '0');
        }
        return negative ? -v : v;
    }
}
